import type { SaveOp } from "../checkpointer/batch.ts";
import type { RunTail } from "../checkpointer/run-tail.ts";
import type { GraphLike } from "../graphs/registry.ts";
import { describeError, type WireValues } from "../serialize.ts";
import type { SnapshotWrite } from "../threads/repository.ts";
import type { RunLastState } from "../threads/snapshot.ts";
import { announceEnd } from "./announce-end.ts";
import type { Attempt, AttemptDeps, NextRun } from "./attempt.ts";
import { recordEnd, type RecordedEnd } from "./record-end.ts";
import type { RunRow } from "./repository.ts";

/** How a run ends, as its attempt records and tells it. */
export type RunEndOutcome = { status: "success"; values: unknown } | { status: "error"; error: { error: string; message: string } } | { status: "interrupted" };

/** What the graph left when it stopped: its checkpoint saves, itself, and its last values as sent. */
export interface GraphRemains {
  tail: RunTail;
  graph?: GraphLike;
  sent?: WireValues;
}

/**
 * Ends a run: waits for the saves it made, computes the thread's snapshot, records the
 * end (fenced by worker and attempt) with its last saves and the snapshot in one
 * statement, then tells everyone. Returns the thread's next run when the same statement
 * claimed it for this worker.
 */
export async function endRun(deps: AttemptDeps, attempt: Attempt, outcome: RunEndOutcome, remains?: GraphRemains): Promise<NextRun | undefined> {
  const { run, control } = attempt;
  const settled = await settleSaves(outcome, remains);
  outcome = settled.outcome;
  if (outcome.status === "error") attempt.output.emit("error", outcome.error);
  const lent = remains?.graph && remains.tail.failure === undefined ? remains.tail.lend(deps.checkpointer) : undefined;
  const fromRun = lent && remains?.graph ? { graph: remains.graph, checkpointer: lent, sent: remains.sent } : undefined;
  // The thread's new snapshot is written with the run's end, in one statement.
  const snapshot = await snapshotAfter(deps, run, outcome, fromRun);
  const saves = remains && { ops: settled.held, storeAlone: (ops: SaveOp[]) => remains.tail.store(ops) };
  // The thread's next run, if one waits, is claimed for this worker in the same statement.
  const claimNext = run.kwargs.temporary ? undefined : control.claimNext?.();
  let recorded = await recordEnd(deps, attempt, { outcome: outcomeColumns(outcome), snapshot, saves, claimNext });
  // Its saves stored with the end: the checkpoint it ended on is where a next run starts.
  const storedWithEnd = recorded.end === "ours" && lent !== undefined;
  if (recorded.end === "unsaved") {
    // Its last checkpoint could not be stored: the run ends in error, the thread as stored.
    const alreadyFailed = outcome.status === "error";
    outcome = { status: "error", error: describeError(recorded.error) };
    if (!alreadyFailed) attempt.output.emit("error", outcome.error);
    const stored = await snapshotAfter(deps, run, outcome);
    recorded = await recordEnd(deps, attempt, { outcome: outcomeColumns(outcome), snapshot: stored, claimNext });
  }
  if (recorded.end === "unsaved") throw recorded.error;
  const next = recorded.end === "ours" && recorded.next ? { ...recorded.next, start: storedWithEnd ? remains!.tail.endedOn() : undefined } : undefined;
  // Ours from now on: a cancel for it must find it while this run's end is being told.
  if (next) control.claimedNext?.(next.run);
  await tellEnd(deps, attempt, recorded, { outcome, snapshot, next });
  return next;
}

/**
 * Waits for the saves the run already sent (they are stored before its end is) and takes
 * the one it held back, which goes with the end (taking it stops its timer). A save the
 * run did not wait for that failed ends the run in error: LangGraph would have ended the
 * run with it, and stored nothing after it.
 */
async function settleSaves(outcome: RunEndOutcome, remains: GraphRemains | undefined): Promise<{ outcome: RunEndOutcome; held: SaveOp[] }> {
  if (!remains) return { outcome, held: [] };
  const held = remains.tail.take();
  await remains.tail.settled();
  if (remains.tail.failure === undefined) return { outcome, held };
  return { outcome: { status: "error", error: describeError(remains.tail.failure) }, held: [] };
}

/** The thread's snapshot after the run; none for a stateless run (its thread goes) or when it cannot be computed. */
async function snapshotAfter(deps: AttemptDeps, run: RunRow, outcome: RunEndOutcome, fromRun?: RunLastState): Promise<SnapshotWrite | undefined> {
  if (run.kwargs.temporary) return undefined;
  return deps.snapshotOf(run.thread_id, outcome.status === "error" ? { runError: outcome.error } : undefined, fromRun).catch((e) => {
    deps.log.warn({ err: e, thread_id: run.thread_id }, "thread snapshot failed");
    return undefined;
  });
}

/** The run row's status and error for an outcome. */
function outcomeColumns(outcome: RunEndOutcome): { status: RunRow["status"]; error?: unknown } {
  return { status: outcome.status, error: outcome.status === "error" ? outcome.error : undefined };
}

/** Tells of the end as it was recorded: ours (announced), gone with its run, or taken by another attempt. */
async function tellEnd(
  deps: AttemptDeps,
  attempt: Attempt,
  recorded: Exclude<RecordedEnd, { end: "unsaved" }>,
  end: { outcome: RunEndOutcome; snapshot: SnapshotWrite | undefined; next: NextRun | undefined },
): Promise<void> {
  const { run } = attempt;
  if (recorded.end === "gone") {
    // The run (or its thread) was deleted while it executed: its waiters still hear of it.
    await deps.lifecycle.emit("ended", { run, result: { run_id: run.run_id, status: "interrupted" }, cause: "removed" });
    return;
  }
  if (recorded.end === "taken") {
    // Our lease expired and another worker has this run now: its outcome counts, not ours.
    deps.log.warn({ run_id: run.run_id, attempt: run.attempt }, "run finished after losing its lease; outcome dropped");
    await deps.lifecycle.emit("handedBack", { run, requeued: false });
    return;
  }
  try {
    await announceEnd(deps, attempt, end);
  } catch (failure) {
    // The next run is ours now: it must go on even if telling of this one's end failed.
    if (!end.next) throw failure;
    deps.log.error({ err: failure, run_id: run.run_id }, "ending the run failed");
  }
}
