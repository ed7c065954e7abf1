import { isOpen, isOver, type StreamBroker } from "./broker.ts";

/** The runs of a thread, in every process sharing the database (runs/run-feed.ts). */
export interface ThreadRunFeed {
  /** Whether other processes may execute runs (false: every run executes here). */
  shared: boolean;
  activeRunIds(threadId: string): Promise<string[]>;
  /** Calls `listener` for each run queued (or handed back to the queue) from now on; returns how to stop. */
  onQueued(listener: (runId: string, threadId: string) => void): Promise<() => Promise<void>>;
}

/**
 * Lets a thread stream see the runs of its thread that execute in another process (a
 * PostgreSQL database shared by several agent servers): it follows, through the relay,
 * the thread's runs active when the stream opens and each run queued on it later, and
 * lets go of each as it ends. With one process (PGlite) every run executes here already.
 * Returns what to call when the stream closes.
 */
export async function followThreadRuns(feed: ThreadRunFeed, broker: StreamBroker, threadId: string): Promise<() => void> {
  if (!feed.shared) return () => undefined;
  const following = new Map<string, () => void>();
  let closed = false;
  const followRun = (runId: string) => {
    if (closed || following.has(runId)) return;
    // A channel that ended here because the run was handed back is reopened (it is queued
    // again); one that ended for good stays ended (the run ended since it was read as active).
    const state = broker.stateOf(runId);
    if (isOver(state)) return;
    if (!isOpen(state)) broker.follow(runId, threadId);
    following.set(runId, broker.streamFromElsewhere(runId));
  };
  const letGo = broker.subscribeThread(threadId, (runId, event) => {
    if (event !== "end") return;
    following.get(runId)?.();
    following.delete(runId);
    // Handed back (shutdown, or a lease this process lost): the run goes on elsewhere.
    if (!isOver(broker.stateOf(runId))) followRun(runId);
  });
  let stopListening: (() => Promise<void>) | undefined;
  const close = () => {
    closed = true;
    letGo();
    void stopListening?.();
    for (const stop of following.values()) stop();
    following.clear();
  };
  try {
    stopListening = await feed.onQueued((runId, announcedThread) => {
      if (announcedThread === threadId) followRun(runId);
    });
    for (const runId of await feed.activeRunIds(threadId)) followRun(runId);
  } catch (error) {
    // Nobody would call the cleanup of a stream that failed to open: do it here.
    close();
    throw error;
  }
  return close;
}
