import type { Queryable } from "../../storage/database.ts";

/**
 * The run engine's view of a thread row: just what creating and finishing runs
 * needs (lock, create-if-missing, mark busy). Everything else about threads lives
 * in src/agentserver/threads.
 */
export interface ThreadHead {
  thread_id: string;
  status: string;
  metadata: Record<string, unknown>;
}

/** Locks the thread for the rest of the transaction: run creation on one thread is serialised. */
export async function lockThread(tx: Queryable, threadId: string): Promise<ThreadHead | undefined> {
  const rows = await tx.query<ThreadHead>("SELECT thread_id, status, metadata FROM threads WHERE thread_id = $1 FOR UPDATE", [threadId]);
  return rows[0];
}

export async function insertThread(
  tx: Queryable,
  threadId: string,
  metadata: Record<string, unknown>,
  temporary: boolean,
): Promise<ThreadHead> {
  const rows = await tx.query<ThreadHead>(
    `INSERT INTO threads (thread_id, status, metadata, temporary) VALUES ($1, 'busy', $2::jsonb, $3)
     RETURNING thread_id, status, metadata`,
    [threadId, JSON.stringify(metadata), temporary],
  );
  return rows[0];
}

/** A run was queued: the thread is busy and remembers which graph it runs. */
export async function markThreadBusy(tx: Queryable, threadId: string, metadata: Record<string, unknown>): Promise<void> {
  await tx.query(
    `UPDATE threads SET status = 'busy', metadata = metadata || $2::jsonb, updated_at = now() WHERE thread_id = $1`,
    [threadId, JSON.stringify(metadata)],
  );
}

export async function threadValues(db: Queryable, threadId: string): Promise<unknown> {
  const rows = await db.query<{ values: unknown }>(`SELECT "values" FROM threads WHERE thread_id = $1`, [threadId]);
  return rows[0]?.values ?? null;
}

export async function deleteThreadRow(db: Queryable, threadId: string): Promise<void> {
  await db.query("DELETE FROM threads WHERE thread_id = $1", [threadId]);
}
