import { announceQueueChanges } from "../../src/agentserver/runs/lifecycle-listeners.ts";
import { RunLifecycle } from "../../src/agentserver/runs/lifecycle.ts";
import type { Database } from "../../src/storage/database.ts";

/**
 * The lifecycle a worker pool tested on its own tells: runs it gives back are announced
 * to the queue as on a server (no streams, waiters or webhooks here).
 */
export function poolLifecycle(db: Database): RunLifecycle {
  const lifecycle = new RunLifecycle({ warn: (obj, msg) => console.warn(msg, obj) });
  announceQueueChanges(lifecycle, db);
  return lifecycle;
}
