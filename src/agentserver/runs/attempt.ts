import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SlipwayError } from "../../http/errors.ts";
import type { Database } from "../../storage/database.ts";
import { batchParams, type SaveOp } from "../checkpointer/batch.ts";
import type { GraphLike } from "../graphs/registry.ts";
import type { RunTail, StartingPoint } from "../checkpointer/run-tail.ts";
import type { GraphRegistry } from "../graphs/registry.ts";
import type { RunStreamWriter } from "../stream/run-streams.ts";
import { describeError, type WireValues } from "../serialize.ts";
import { deleteThreadRow, threadValues, type SnapshotWrite } from "../threads/repository.ts";
import type { RunLastState } from "../threads/snapshot.ts";
import type { AssistantHandoff } from "./assistant-handoff.ts";
import type { RunResult } from "./completion.ts";
import { executeGraph, type ExecutionOutcome, type RunAssistant } from "./executor.ts";
import type { RunLifecycle, RunLifecycleEvents } from "./lifecycle.ts";
import { cancelActionOf, deleteRun, finishRunWithSnapshot, handBackRun, nextRunLeasedTo, persistRunEvents, runEndOf, saveRunResult, type ClaimedRun, type RunRow } from "./repository.ts";

/** Attempts after which a run that keeps failing to finish ends in error. */
export const MAX_RUN_ATTEMPTS = 5;

/** What the worker pool gives an attempt. */
export interface AttemptControl {
  signal: AbortSignal;
  workerId: string;
  /** Whether this worker may take its thread's next run when this one ends (undefined: no). */
  claimNext?: () => { leaseSeconds: number } | undefined;
  /** Told as soon as the end claimed the next run, before the attempt returns it. */
  claimedNext?: (run: RunRow) => void;
  /** The thread's newest checkpoint, when the run that claimed this one knew it (run-tail.ts). */
  start?: StartingPoint;
}

/**
 * The thread's next run, claimed for the same worker with this one's end (migration
 * 0023), and the checkpoint this one ended on, which is where the next one starts.
 */
export type NextRun = ClaimedRun & { start?: StartingPoint };

export interface AttemptDeps {
  db: Database;
  graphs: GraphRegistry;
  streams: RunStreamWriter;
  lifecycle: RunLifecycle;
  assistants: { get(idOrGraphId: string): Promise<RunAssistant> };
  checkpointer: {
    latestCheckpointMeta(threadId: string): Promise<{ checkpoint_id: string; metadata: Record<string, unknown> } | undefined>;
    deleteCheckpointsOfRun(threadId: string, runId: string): Promise<unknown>;
    deleteThread(threadId: string): Promise<void>;
    /** Follows the run's own saves (checkpointer/run-tail.ts) until unfollow. */
    followRun(threadId: string, runId: string, durability: RunRow["kwargs"]["durability"], start?: StartingPoint): RunTail;
    unfollow(tail: RunTail): void;
    getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  };
  /** Computes the thread's snapshot after a run (undefined: thread gone); `fromRun` saves reading it back. */
  snapshotOf(threadId: string, outcome?: { runError?: unknown }, fromRun?: RunLastState): Promise<SnapshotWrite | undefined>;
  /** Rewrites the thread's snapshot; returns the values written (undefined: thread gone). */
  refreshThread(threadId: string, outcome?: { runError?: unknown }): Promise<{ values: unknown } | undefined>;
  /** Assistants of runs created in this process (saves reading them again). */
  handoff?: AssistantHandoff;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

/**
 * Takes one claimed run from start to its recorded end: stream events, final status,
 * thread snapshot and removal of a stateless run's thread; its lifecycle events tell
 * everyone else (waiters, streams, webhook). Comes back with the thread's next run when
 * the pool let the end claim it (`control.claimNext`, migration 0023).
 */
export function createAttemptRunner(deps: AttemptDeps) {
  return async function runAttempt(run: RunRow, control: AttemptControl): Promise<NextRun | undefined> {
    const { streams, lifecycle } = deps;
    await lifecycle.emit("claimed", { run });
    const events: Array<{ id: number; event: string; data: unknown }> = [];
    const emit = (event: string, data: unknown) => {
      const record = streams.publish(run.run_id, { event, data, attempt: run.attempt });
      if (record && run.kwargs.stream_resumable) events.push(record);
    };
    emit("metadata", { run_id: run.run_id, attempt: run.attempt });

    // A run retried this often (each retry follows a crash or an end that could not be
    // recorded) would loop for ever: it ends in error instead.
    if (run.attempt > MAX_RUN_ATTEMPTS) {
      const message = `the run was started ${run.attempt - 1} times without its end being recorded; giving up`;
      return finish(run, control, { status: "error", error: { error: "RunAttemptsExceeded", message } }, emit, events);
    }

    let assistant: RunAssistant;
    try {
      assistant = deps.handoff?.take(run.run_id) ?? (await deps.assistants.get(run.assistant_id));
    } catch (error) {
      // Any other failure (the database's) is no outcome of the run: it goes up, the run
      // leaves the pool, and the sweeper gives it another attempt once its lease expires.
      if (!(error instanceof SlipwayError && error.code === "not_found")) throw error;
      return finish(run, control, { status: "error", error: { error: "AssistantNotFound", message: error.message } }, emit, events);
    }
    const resumeFromCheckpoint = run.attempt > 1 && (await wroteCheckpoint(deps, run));
    await lifecycle.emit("started", { run });
    const tail = deps.checkpointer.followRun(run.thread_id, run.run_id, run.kwargs.durability, resumeFromCheckpoint ? undefined : control.start);
    try {
      const outcome = await executeGraph({ graphs: deps.graphs, assistant, run, signal: control.signal, emit, resumeFromCheckpoint });
      return await afterExecution(run, control, outcome, tail, emit, events);
    } finally {
      deps.checkpointer.unfollow(tail);
    }
  };

  async function afterExecution(
    run: RunRow,
    control: AttemptControl,
    outcome: ExecutionOutcome,
    tail: RunTail,
    emit: (event: string, data: unknown) => void,
    events: Array<{ id: number; event: string; data: unknown }>,
  ): Promise<NextRun | undefined> {
    if (outcome.status === "cancelled") {
      // What the run saved last is stored before a rollback deletes the run's checkpoints;
      // saves the stopping graph still makes are no longer held (they would land after it).
      deps.checkpointer.unfollow(tail);
      await tail.flush().catch((e) => deps.log.warn({ err: e, run_id: run.run_id }, "saving a stopped run's last checkpoint failed"));
      const action = await cancelActionOf(deps.db, run.run_id);
      if (action === undefined) {
        // The run (or its thread) was deleted while executing.
        await ended(run, undefined, "removed");
        return undefined;
      }
      if (action === null) {
        // Aborted by shutdown, not by a client: hand it back to the queue. When it is no
        // longer ours, the lease was lost and another worker has it: nothing to requeue.
        const requeued = await handBackRun(deps.db, run.run_id, { workerId: control.workerId, attempt: run.attempt });
        await deps.lifecycle.emit("handedBack", { run, requeued });
        return undefined;
      }
      if (action === "rollback") {
        await deps.checkpointer.deleteCheckpointsOfRun(run.thread_id, run.run_id);
        await deleteRun(deps.db, run.run_id);
        await deps.refreshThread(run.thread_id).catch((e) => deps.log.warn({ err: e }, "thread refresh failed"));
        await ended(run, { run_id: run.run_id, status: "interrupted" }, "stopped");
        return undefined;
      }
      return finish(run, control, { status: "interrupted" }, emit, events);
    }
    if (outcome.status === "lost") {
      // The graph's process died, not the graph: this attempt goes back to the queue, and
      // the next one starts from what the run stored last (MAX_RUN_ATTEMPTS bounds a crash loop).
      deps.checkpointer.unfollow(tail);
      await tail.flush().catch((e) => deps.log.warn({ err: e, run_id: run.run_id }, "saving a lost attempt's last checkpoint failed"));
      deps.log.warn({ run_id: run.run_id, attempt: run.attempt, cause: outcome.error.message }, "the process running the graph was lost; the run goes back to the queue");
      const requeued = await handBackRun(deps.db, run.run_id, { workerId: control.workerId, attempt: run.attempt });
      await deps.lifecycle.emit("handedBack", { run, requeued });
      return undefined;
    }
    return finish(run, control, outcome.status === "success" ? { status: "success", values: outcome.values } : outcome, emit, events, {
      tail,
      graph: outcome.graph,
      sent: outcome.status === "success" ? outcome.final : undefined,
    });
  }

  /**
   * Records the run's end (fenced by worker and attempt) with the thread's snapshot, and
   * the run's held-back last saves when it has some (`saves`, sent with the first try
   * only; a failed first try stores them on their own before the next).
   * A passing database error (a serialization failure, a dropped connection) gets a few
   * tries; a try that reports "not ours" after an earlier one failed reads the row back,
   * since that earlier write may have landed with its answer lost. If the snapshot is
   * what the database refuses (say a NUL character in the values), the end is recorded
   * without it. If nothing works the error goes up: the run leaves the pool, its lease is
   * no longer renewed, and the sweeper gives it another attempt (up to MAX_RUN_ATTEMPTS).
   */
  async function recordEnd(
    run: RunRow,
    workerId: string,
    outcome: { status: RunRow["status"]; error?: unknown },
    snapshot: SnapshotWrite | undefined,
    saves?: { ops: SaveOp[]; storeAlone(ops: SaveOp[]): Promise<void> },
    claimNext?: { leaseSeconds: number },
  ): Promise<{ end: "ours"; next?: NextRun } | { end: "taken" | "gone" } | { end: "unsaved"; error: unknown }> {
    const fence = { workerId, attempt: run.attempt };
    const target = { runId: run.run_id, threadId: run.thread_id };
    let failure: unknown;
    for (const [index, delayMs] of [0, 50, 250, 1000].entries()) {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (index === 1 && saves?.ops.length) {
        // The end is not recorded: the caller ends the run in error with what is stored.
        const stored = await saves.storeAlone(saves.ops).then(() => undefined, (error: unknown) => ({ error }));
        if (stored) return { end: "unsaved", error: stored.error };
      }
      const withSnapshot = index < 3 ? snapshot : undefined;
      const withSaves = index === 0 && saves?.ops.length ? batchParams(saves.ops) : undefined;
      try {
        const ended = await finishRunWithSnapshot(deps.db, target, fence, outcome, withSnapshot, { saves: withSaves, claimNext });
        if (ended.owned) return { end: "ours", next: ended.next };
        const row = await runEndOf(deps.db, run.run_id);
        if (!row) return { end: "gone" };
        const landed = failure !== undefined && row.attempt === run.attempt && row.lease_owner === null && row.status === outcome.status;
        if (!landed) return { end: "taken" };
        // An earlier try landed with its answer lost: it may have claimed the thread's next run for us.
        const next = claimNext ? await nextRunLeasedTo(deps.db, run.thread_id, workerId) : undefined;
        return { end: "ours", next };
      } catch (error) {
        failure = error;
        deps.log.warn({ err: error, run_id: run.run_id, try: index + 1 }, "recording the run's end failed");
      }
    }
    throw failure;
  }

  function ended(run: RunRow, result: RunResult | undefined, cause: RunLifecycleEvents["ended"]["cause"]): Promise<void> {
    return deps.lifecycle.emit("ended", { run, result, cause });
  }

  async function finish(
    run: RunRow,
    control: AttemptControl,
    outcome: { status: "success"; values: unknown } | { status: "error"; error: { error: string; message: string } } | { status: "interrupted" },
    emit: (event: string, data: unknown) => void,
    events: Array<{ id: number; event: string; data: unknown }>,
    last?: { tail: RunTail; graph?: GraphLike; sent?: WireValues },
  ): Promise<NextRun | undefined> {
    // The held save goes with the end (taking it stops its timer); the saves the run
    // already sent are stored before the end is.
    let held = last ? last.tail.take() : [];
    await last?.tail.settled();
    if (last?.tail.failure !== undefined) {
      // A save the run did not wait for failed: LangGraph would have ended the run with it,
      // and stored nothing after it.
      outcome = { status: "error", error: describeError(last.tail.failure) };
      held = [];
    }
    let error = outcome.status === "error" ? outcome.error : undefined;
    if (error) emit("error", error);
    const lent = last?.graph && last.tail.failure === undefined ? last.tail.lend(deps.checkpointer) : undefined;
    const fromRun = lent && last?.graph ? { graph: last.graph, checkpointer: lent, sent: last.sent } : undefined;
    // The thread's new snapshot is written with the run's end, in one statement; a
    // stateless run's thread is deleted below, so it needs none.
    const snapshot = run.kwargs.temporary
      ? undefined
      : await deps.snapshotOf(run.thread_id, error ? { runError: error } : undefined, fromRun).catch((e) => {
          deps.log.warn({ err: e, thread_id: run.thread_id }, "thread snapshot failed");
          return undefined;
        });
    const saves = last && { ops: held, storeAlone: (ops: SaveOp[]) => last.tail.store(ops) };
    // The thread's next run, if one waits, is claimed for this worker in the same statement.
    const claimNext = run.kwargs.temporary ? undefined : control.claimNext?.();
    let recorded = await recordEnd(run, control.workerId, { status: outcome.status, error }, snapshot, saves, claimNext);
    // Its saves stored with the end: the checkpoint it ended on is where a next run starts.
    const storedWithEnd = recorded.end === "ours" && lent !== undefined;
    if (recorded.end === "unsaved") {
      // Its last checkpoint could not be stored: the run ends in error, the thread as stored.
      const alreadyFailed = outcome.status === "error";
      error = describeError(recorded.error);
      outcome = { status: "error", error };
      if (!alreadyFailed) emit("error", error);
      const stored = run.kwargs.temporary
        ? undefined
        : await deps.snapshotOf(run.thread_id, { runError: error }).catch((e) => {
            deps.log.warn({ err: e, thread_id: run.thread_id }, "thread snapshot failed");
            return undefined;
          });
      recorded = await recordEnd(run, control.workerId, { status: "error", error }, stored, undefined, claimNext);
    }
    if (recorded.end === "unsaved") throw recorded.error;
    const next = recorded.end === "ours" && recorded.next ? { ...recorded.next, start: storedWithEnd ? last!.tail.endedOn() : undefined } : undefined;
    // Ours from now on: a cancel for it must find it while this run's end is being told.
    if (next) control.claimedNext?.(next.run);
    if (recorded.end === "gone") {
      // The run (or its thread) was deleted while it executed: its waiters still hear of it.
      await ended(run, { run_id: run.run_id, status: "interrupted" }, "removed");
      return undefined;
    }
    if (recorded.end === "taken") {
      // Our lease expired and another worker has this run now: its outcome counts, not ours.
      deps.log.warn({ run_id: run.run_id, attempt: run.attempt }, "run finished after losing its lease; outcome dropped");
      await deps.lifecycle.emit("handedBack", { run, requeued: false });
      return undefined;
    }
    try {
      await announceEnd(run, outcome, error, snapshot, events);
    } catch (failure) {
      // The next run is ours now: it must go on even if telling of this one's end failed.
      if (!next) throw failure;
      deps.log.error({ err: failure, run_id: run.run_id }, "ending the run failed");
    }
    return next;
  }

  /** After the end is recorded: run events kept, a stateless run's thread removed, everyone told. */
  async function announceEnd(
    run: RunRow,
    outcome: { status: "success"; values: unknown } | { status: "error" | "interrupted" },
    error: { error: string; message: string } | undefined,
    snapshot: SnapshotWrite | undefined,
    events: Array<{ id: number; event: string; data: unknown }>,
  ): Promise<void> {
    if (run.kwargs.stream_resumable && events.length) {
      await persistRunEvents(deps.db, run.run_id, events).catch((e) => deps.log.warn({ err: e }, "persisting run events failed"));
    }
    // A /wait caller gets the thread's values (what the snapshot holds), a stateless one the run's.
    let values: unknown;
    if (outcome.status === "success") {
      const unread = Symbol("unread");
      const read = run.kwargs.temporary
        ? outcome.values
        : snapshot
          ? snapshot.values
          : await threadValues(deps.db, run.thread_id).catch((e) => {
              deps.log.warn({ err: e, run_id: run.run_id }, "reading the thread's values at a run's end failed");
              return unread;
            });
      // The end is recorded: it is told all the same, and its waiters read the records.
      if (read === unread) return ended(run, undefined, "finished");
      values = read;
    }
    if (run.kwargs.temporary) {
      // A waiter in another process (shared PostgreSQL) reads the outcome from here once
      // the run row has gone with its thread; a database of our own has no other process.
      if (deps.db.shared) {
        await saveRunResult(deps.db, { run_id: run.run_id, status: outcome.status, values, error }).catch((e) =>
          deps.log.warn({ err: e, run_id: run.run_id }, "saving a stateless run's result failed"),
        );
      }
      // A stateless run's thread (and its checkpoints) leave with it, before anyone is told it ended.
      await deleteThreadRow(deps.db, run.thread_id).catch((e) => deps.log.warn({ err: e, thread_id: run.thread_id }, "removing a stateless run's thread failed"));
      await deps.checkpointer.deleteThread(run.thread_id).catch((e) => deps.log.warn({ err: e, thread_id: run.thread_id }, "removing a stateless run's checkpoints failed"));
    }
    await ended(run, { run_id: run.run_id, status: outcome.status, values, error }, "finished");
  }
}


/** Did this run already write a checkpoint (so a retry must continue from it)? */
async function wroteCheckpoint(deps: AttemptDeps, run: RunRow): Promise<boolean> {
  const latest = await deps.checkpointer.latestCheckpointMeta(run.thread_id);
  return latest?.metadata?.run_id === run.run_id;
}
