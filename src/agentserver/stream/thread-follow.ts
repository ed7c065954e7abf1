import type { Database } from "../../storage/database.ts";
import { runsChannel } from "../runs/announcements.ts";
import type { StreamBroker } from "./broker.ts";

/**
 * Lets a thread stream see the runs of its thread that execute in another process (a
 * PostgreSQL database shared by several agent servers): it follows, through the relay,
 * the thread's runs active when the stream opens and each run queued on it later, and
 * lets go of each as it ends. With one process (PGlite) every run executes here already.
 * Returns what to call when the stream closes.
 */
export async function followThreadRuns(db: Database, broker: StreamBroker, threadId: string): Promise<() => void> {
  if (!db.shared) return () => undefined;
  const following = new Map<string, () => void>();
  let closed = false;
  const followRun = (runId: string) => {
    if (closed || following.has(runId)) return;
    // A channel that ended here because the run was handed back is reopened (it is queued
    // again); one that ended for good stays ended (the run ended since it was read as active).
    if (broker.endedForGood(runId)) return;
    if (!broker.isActive(runId)) broker.follow(runId, threadId);
    following.set(runId, broker.streamFromElsewhere(runId));
  };
  const letGo = broker.subscribeThread(threadId, (runId, event) => {
    if (event !== "end") return;
    following.get(runId)?.();
    following.delete(runId);
    // Handed back (shutdown, or a lease this process lost): the run goes on elsewhere.
    if (!broker.endedForGood(runId)) followRun(runId);
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
    // Every run queued (or handed back to the queue) is announced with its thread.
    stopListening = await db.listen(runsChannel(db.schema), (payload) => {
      const [runId, , announcedThread] = payload.split(" ");
      if (announcedThread === threadId && runId && runId !== "-") followRun(runId);
    });
    const active = await db.query<{ run_id: string }>(
      "SELECT run_id FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq",
      [threadId],
    );
    for (const row of active) followRun(row.run_id);
  } catch (error) {
    // Nobody would call the cleanup of a stream that failed to open: do it here.
    close();
    throw error;
  }
  return close;
}
