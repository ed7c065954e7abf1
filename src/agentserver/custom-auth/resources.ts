import type { Queryable } from "../../storage/database.ts";

/**
 * The metadata custom auth's filters are matched against, read by id. `undefined`: no
 * such row (the route then answers its own 404). Kept apart from the resources'
 * repositories because only the auth layer reads rows this way.
 */
export async function threadMetadata(db: Queryable, threadId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM threads WHERE thread_id = $1", [threadId]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

export async function assistantMetadata(db: Queryable, assistantId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM assistants WHERE assistant_id = $1", [assistantId]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

export async function cronMetadata(db: Queryable, cronId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM crons WHERE cron_id = $1", [cronId]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

/** A run is reached through its thread: the thread's metadata decides. */
export async function threadOfRun(db: Queryable, runId: string): Promise<string | undefined> {
  const rows = await db.query<{ thread_id: string }>("SELECT thread_id FROM runs WHERE run_id = $1", [runId]);
  return rows[0]?.thread_id;
}

