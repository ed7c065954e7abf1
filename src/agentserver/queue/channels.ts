/** NOTIFY channels of the run queue. */
export const RUNS_CHANNEL = "slipway_runs";
export const RUN_CANCEL_CHANNEL = "slipway_run_cancel";

/**
 * The payload on RUNS_CHANNEL: "<run_id> <delay seconds> <thread_id>". Workers claim a
 * due run at once, set a timer for a delayed one, and leave one queued behind a run
 * they execute until that run ends. `run_id` "-" announces a change of the thread's
 * queue (a run handed back or cancelled) rather than a new run.
 */
export function queueAnnouncement(runId: string, delaySeconds: number, threadId: string): string {
  return `${runId} ${delaySeconds} ${threadId}`;
}
