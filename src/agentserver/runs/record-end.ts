import { batchParams, type SaveOp } from "../checkpointer/batch.ts";
import type { SnapshotWrite } from "../threads/repository.ts";
import type { Attempt, AttemptDeps } from "./attempt.ts";
import { finishRunWithSnapshot, nextRunLeasedTo, runEndOf, type ClaimedRun } from "./queue-repository.ts";
import type { RunRow } from "./repository.ts";

/** A run's end as its attempt records it. */
export interface EndToRecord {
  outcome: { status: RunRow["status"]; error?: unknown };
  /** The thread's new snapshot (undefined: only the run is recorded). */
  snapshot: SnapshotWrite | undefined;
  /** The run's held-back last saves, and how to store them on their own. */
  saves?: { ops: SaveOp[]; storeAlone(ops: SaveOp[]): Promise<void> };
  /** Claim the thread's next run for this worker with the end (migration 0023). */
  claimNext?: { leaseSeconds: number };
}

/**
 * ours: recorded (with the next run when one was claimed); taken: another attempt holds
 * the run now; gone: the run was deleted; unsaved: its last saves could not be stored.
 */
export type RecordedEnd = { end: "ours"; next?: ClaimedRun } | { end: "taken" | "gone" } | { end: "unsaved"; error: unknown };

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
export async function recordEnd(deps: Pick<AttemptDeps, "db" | "log">, { run, control }: Attempt, end: EndToRecord): Promise<RecordedEnd> {
  const { workerId } = control;
  const { saves, claimNext } = end;
  let failure: unknown;
  for (const [index, delayMs] of [0, 50, 250, 1000].entries()) {
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (index === 1 && saves?.ops.length) {
      // The end is not recorded: the caller ends the run in error with what is stored.
      const stored = await saves.storeAlone(saves.ops).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      if (stored) return { end: "unsaved", error: stored.error };
    }
    try {
      const ended = await finishRunWithSnapshot(
        deps.db,
        { runId: run.run_id, threadId: run.thread_id, workerId, attempt: run.attempt },
        {
          outcome: end.outcome,
          snapshot: index < 3 ? end.snapshot : undefined,
          saves: index === 0 && saves?.ops.length ? batchParams(saves.ops) : undefined,
          claimNext,
        },
      );
      if (ended.owned) return { end: "ours", next: ended.next };
      const row = await runEndOf(deps.db, run.run_id);
      if (!row) return { end: "gone" };
      const landed = failure !== undefined && row.attempt === run.attempt && row.lease_owner === null && row.status === end.outcome.status;
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
