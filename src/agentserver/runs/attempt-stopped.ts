import type { RunTail } from "../checkpointer/run-tail.ts";
import type { Attempt, AttemptDeps, NextRun } from "./attempt.ts";
import { endRun } from "./end-run.ts";
import { handBackRun } from "./queue-repository.ts";
import { cancelActionOf, deleteRun } from "./repository.ts";

/**
 * The graph stopped because its signal was aborted: by a client's cancel (interrupt or
 * rollback, read from the run's row), by its run's removal, or by this process shutting
 * down (no cancel asked: the run goes back to the queue).
 */
export async function afterCancel(deps: AttemptDeps, attempt: Attempt, tail: RunTail): Promise<NextRun | undefined> {
  const { run } = attempt;
  // What the run saved last is stored before a rollback deletes the run's checkpoints;
  // saves the stopping graph still makes are no longer held (they would land after it).
  await flushLastSaves(deps, tail, run.run_id, "saving a stopped run's last checkpoint failed");
  const action = await cancelActionOf(deps.db, run.run_id);
  if (action === undefined) {
    // The run (or its thread) was deleted while executing.
    await deps.lifecycle.emit("ended", { run, result: undefined, cause: "removed" });
    return undefined;
  }
  if (action === null) {
    // Aborted by shutdown, not by a client: hand it back to the queue. When it is no
    // longer ours, the lease was lost and another worker has it: nothing to requeue.
    await handBack(deps, attempt);
    return undefined;
  }
  if (action === "rollback") {
    await deps.checkpointer.deleteCheckpointsOfRun(run.thread_id, run.run_id);
    await deleteRun(deps.db, run.run_id);
    await deps.refreshThread(run.thread_id).catch((e) => deps.log.warn({ err: e }, "thread refresh failed"));
    await deps.lifecycle.emit("ended", { run, result: { run_id: run.run_id, status: "interrupted" }, cause: "stopped" });
    return undefined;
  }
  return endRun(deps, attempt, { status: "interrupted" });
}

/**
 * The graph's process died, not the graph: this attempt goes back to the queue, and the
 * next one starts from what the run stored last (MAX_RUN_ATTEMPTS bounds a crash loop).
 */
export async function afterLostProcess(deps: AttemptDeps, attempt: Attempt, tail: RunTail, cause: { message: string }): Promise<undefined> {
  const { run } = attempt;
  await flushLastSaves(deps, tail, run.run_id, "saving a lost attempt's last checkpoint failed");
  deps.log.warn({ run_id: run.run_id, attempt: run.attempt, cause: cause.message }, "the process running the graph was lost; the run goes back to the queue");
  await handBack(deps, attempt);
  return undefined;
}

/** Stops following the run's saves and stores the one it held back, if any. */
async function flushLastSaves(deps: AttemptDeps, tail: RunTail, runId: string, failed: string): Promise<void> {
  deps.checkpointer.unfollow(tail);
  await tail.flush().catch((e) => deps.log.warn({ err: e, run_id: runId }, failed));
}

/** Gives the run back to the queue if this attempt still holds it, and says so. */
async function handBack(deps: AttemptDeps, { run, control }: Attempt): Promise<void> {
  const requeued = await handBackRun(deps.db, run.run_id, { workerId: control.workerId, attempt: run.attempt });
  await deps.lifecycle.emit("handedBack", { run, requeued });
}
