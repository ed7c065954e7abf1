import { createHash } from "node:crypto";

/**
 * NOTIFY channels of the agent server. Channels are database-wide, so each is named
 * after the schema: agent servers of different deployments on one PostgreSQL server
 * do not wake, cancel or answer each other.
 */
export const runsChannel = (schema: string) => schemaChannel("slipway_runs", schema);
export const runCancelChannel = (schema: string) => schemaChannel("slipway_run_cancel", schema);
export const runDoneChannel = (schema: string) => schemaChannel("slipway_run_done", schema);
export const streamChannel = (schema: string) => schemaChannel("slipway_stream", schema);

/** `<base>_<schema>`, or a hash of the schema when that exceeds an identifier's 63 bytes. */
export function schemaChannel(base: string, schema: string): string {
  const name = `${base}_${schema}`;
  return name.length <= 63 ? name : `${base}_${createHash("sha256").update(schema).digest("hex").slice(0, 40)}`;
}

/**
 * The payload on the runs channel: "<run_id> <delay seconds> <thread_id>", then " claimed"
 * for a run its creator claimed as it queued it (migration 0022 writes the same text).
 * Workers claim a due run at once, set a timer for a delayed one, leave one queued behind
 * a run they execute until that run ends, and ignore a claimed one; thread streams follow
 * them all. `run_id` "-" announces a change of the thread's queue (a run handed back or
 * cancelled) rather than a new run.
 */
export function queueAnnouncement(runId: string, delaySeconds: number, threadId: string, claimed = false): string {
  return `${runId} ${delaySeconds} ${threadId}${claimed ? " claimed" : ""}`;
}

export interface QueueAnnouncement {
  /** Undefined for a change of the thread's queue ("-"). */
  runId: string | undefined;
  delaySeconds: number;
  threadId: string | undefined;
  /** Already claimed by the process that queued it: nothing for workers to do. */
  claimed: boolean;
}

/** Reads what `queueAnnouncement` wrote; tolerant of a missing part, as older senders may omit the thread. */
export function readQueueAnnouncement(payload: string): QueueAnnouncement {
  const [runId, delayText, threadId, mark] = payload.split(" ");
  const delay = Number(delayText ?? 0);
  return {
    runId: runId && runId !== "-" ? runId : undefined,
    delaySeconds: Number.isFinite(delay) && delay > 0 ? delay : 0,
    threadId: threadId || undefined,
    claimed: mark === "claimed",
  };
}
