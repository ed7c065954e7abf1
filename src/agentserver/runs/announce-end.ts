import { deleteThreadRow, threadValues, type SnapshotWrite } from "../threads/repository.ts";
import type { Attempt, AttemptDeps } from "./attempt.ts";
import type { RunEndOutcome } from "./end-run.ts";
import { persistRunEvents, saveRunResult } from "./repository.ts";

/**
 * After the end is recorded: a resumable run's events kept, a stateless run's thread
 * removed (its result kept for waiters in other processes), then everyone told (the
 * lifecycle's `ended`: waiters, streams, webhook).
 */
export async function announceEnd(
  deps: AttemptDeps,
  { run, output }: Attempt,
  end: { outcome: RunEndOutcome; snapshot: SnapshotWrite | undefined },
): Promise<void> {
  const { outcome } = end;
  const error = outcome.status === "error" ? outcome.error : undefined;
  if (run.kwargs.stream_resumable && output.kept.length) {
    await persistRunEvents(deps.db, run.run_id, output.kept).catch((e) => deps.log.warn({ err: e }, "persisting run events failed"));
  }
  // A /wait caller gets the thread's values (what the snapshot holds), a stateless one the run's.
  let values: unknown;
  if (outcome.status === "success") {
    const unread = Symbol("unread");
    const read = run.kwargs.temporary
      ? outcome.values
      : end.snapshot
        ? end.snapshot.values
        : await threadValues(deps.db, run.thread_id).catch((e) => {
            deps.log.warn({ err: e, run_id: run.run_id }, "reading the thread's values at a run's end failed");
            return unread;
          });
    // The end is recorded: it is told all the same, and its waiters read the records.
    if (read === unread) return deps.lifecycle.emit("ended", { run, result: undefined, cause: "finished" });
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
    await deps.checkpointer
      .deleteThread(run.thread_id)
      .catch((e) => deps.log.warn({ err: e, thread_id: run.thread_id }, "removing a stateless run's checkpoints failed"));
  }
  await deps.lifecycle.emit("ended", { run, result: { run_id: run.run_id, status: outcome.status, values, error }, cause: "finished" });
}
