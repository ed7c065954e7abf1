import type { Queryable } from "../../storage/database.ts";
import type { ThreadStatus } from "./schemas.ts";
import { activeStatusSql } from "../run-statuses.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";

/**
 * SQL of the threads group. No policy here: the service decides, these statements do.
 * metadata, config, values and interrupts are `json` columns, which keep the order of
 * keys as written; filters cast them to jsonb (migration 0025, decision 0031).
 */

export interface ThreadTtl {
  strategy: "delete" | "keep_latest";
  ttl_minutes: number;
}

export interface ThreadRow {
  thread_id: string;
  status: ThreadStatus;
  metadata: Record<string, unknown>;
  config: Record<string, unknown>;
  values: unknown;
  interrupts: Record<string, unknown>;
  error: unknown;
  temporary: boolean;
  ttl: ThreadTtl | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  state_updated_at: Date;
}

interface ThreadFilter {
  ids?: string[] | null;
  metadata?: Record<string, unknown> | null;
  values?: Record<string, unknown> | null;
  status?: ThreadStatus | null;
}

interface NewThread {
  thread_id: string;
  metadata: Record<string, unknown>;
  ttl: ThreadTtl | null;
  expires_at: Date | null;
}

const COLUMNS = `thread_id, status, metadata, config, "values", interrupts, error, temporary, ttl, expires_at, created_at, updated_at, state_updated_at`;

/** Inserts a thread unless the id is taken; `undefined` means it was. */
export async function insertThread(db: Queryable, thread: NewThread): Promise<ThreadRow | undefined> {
  const rows = await db.query<ThreadRow>(
    `INSERT INTO threads (thread_id, metadata, ttl, expires_at) VALUES ($1, $2::json, $3::jsonb, $4)
     ON CONFLICT (thread_id) DO NOTHING RETURNING ${COLUMNS}`,
    [thread.thread_id, jsonbText(thread.metadata), thread.ttl ? JSON.stringify(thread.ttl) : null, thread.expires_at],
  );
  return rows[0];
}

export async function getThread(db: Queryable, threadId: string): Promise<ThreadRow | undefined> {
  const rows = await db.query<ThreadRow>(`SELECT ${COLUMNS} FROM threads WHERE thread_id = $1`, [threadId]);
  return rows[0];
}

/** Merges `metadata` into the stored metadata (top-level keys, in order: json_merge) and/or replaces the TTL. */
export async function patchThread(
  db: Queryable,
  threadId: string,
  patch: { metadata?: Record<string, unknown>; ttl?: { ttl: ThreadTtl; expires_at: Date } },
): Promise<ThreadRow | undefined> {
  const rows = await db.query<ThreadRow>(
    `UPDATE threads SET metadata = json_merge(metadata, $2::json),
       ttl = CASE WHEN $3::boolean THEN $4::jsonb ELSE ttl END,
       expires_at = CASE WHEN $3::boolean THEN $5::timestamptz ELSE expires_at END,
       updated_at = now()
     WHERE thread_id = $1 RETURNING ${COLUMNS}`,
    [threadId, jsonbText(patch.metadata ?? {}), !!patch.ttl, patch.ttl ? JSON.stringify(patch.ttl.ttl) : null, patch.ttl?.expires_at ?? null],
  );
  return rows[0];
}

/** Deletes the thread row; its runs go with it (ON DELETE CASCADE). */
export async function deleteThreadRow(db: Queryable, threadId: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM threads WHERE thread_id = $1 RETURNING thread_id`, [threadId]);
  return rows.length > 0;
}

/**
 * Copies a thread row under a new id: metadata, config, values, interrupts, error and
 * status come along (a busy source yields an idle copy: the copy has no runs); the TTL
 * too, counted from `expiresAt`.
 */
export async function copyThreadRow(db: Queryable, fromId: string, toId: string, now: Date): Promise<ThreadRow | undefined> {
  const rows = await db.query<ThreadRow>(
    `INSERT INTO threads (thread_id, status, metadata, config, "values", interrupts, error, ttl, expires_at, state_updated_at)
     SELECT $2, CASE WHEN status = 'busy' THEN 'idle' ELSE status END, metadata, config, "values", interrupts, error, ttl,
            CASE WHEN ttl IS NULL THEN NULL ELSE $3::timestamptz + make_interval(secs => (ttl->>'ttl_minutes')::float8 * 60) END,
            state_updated_at
     FROM threads WHERE thread_id = $1 RETURNING ${COLUMNS}`,
    [fromId, toId, now],
  );
  return rows[0];
}

/** WHERE clause and parameters for the search/count filters; stateless runs' threads stay hidden. */
function filterSql(filter: ThreadFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = ["NOT temporary"];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (filter.ids) add((p) => `thread_id = ANY(${p}::uuid[])`, filter.ids);
  if (filter.metadata && Object.keys(filter.metadata).length) add((p) => `metadata::jsonb @> ${p}::jsonb`, jsonbText(filter.metadata));
  if (filter.values && Object.keys(filter.values).length) add((p) => `"values"::jsonb @> ${p}::jsonb`, jsonbText(filter.values));
  if (filter.status) add((p) => `status = ${p}`, filter.status);
  return { where: where.join(" AND "), params };
}

const SORTABLE = new Set(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]);

export async function searchThreads(
  db: Queryable,
  filter: ThreadFilter,
  page: { limit: number; offset: number; sortBy: string; sortOrder: "asc" | "desc" },
): Promise<ThreadRow[]> {
  // Sort keys are interpolated, so they come from a closed list; thread_id breaks ties.
  if (!SORTABLE.has(page.sortBy)) throw new Error(`unsortable column ${page.sortBy}`);
  const direction = page.sortOrder === "asc" ? "ASC" : "DESC";
  const { where, params } = filterSql(filter);
  params.push(page.limit, page.offset);
  return db.query<ThreadRow>(
    `SELECT ${COLUMNS} FROM threads WHERE ${where}
     ORDER BY ${page.sortBy} ${direction}, thread_id ${direction} LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
}

export async function countThreads(db: Queryable, filter: ThreadFilter): Promise<number> {
  const { where, params } = filterSql(filter);
  const rows = await db.query<{ count: number | string }>(`SELECT count(*) AS count FROM threads WHERE ${where}`, params);
  return Number(rows[0]?.count ?? 0);
}

/** Ids of the threads whose metadata contains `metadata` (temporary ones included). */
export async function threadIdsWithMetadata(db: Queryable, metadata: Record<string, unknown>): Promise<string[]> {
  const rows = await db.query<{ thread_id: string }>(`SELECT thread_id FROM threads WHERE metadata::jsonb @> $1::jsonb`, [jsonbText(metadata)]);
  return rows.map((r) => r.thread_id);
}

export async function existingThreadIds(db: Queryable, ids: string[]): Promise<string[]> {
  const rows = await db.query<{ thread_id: string }>(`SELECT thread_id FROM threads WHERE thread_id = ANY($1::uuid[])`, [ids]);
  return rows.map((r) => r.thread_id);
}

/** A thread's metadata alone (custom auth matches its filters against it); `undefined`: no such thread. */
export async function threadMetadata(db: Queryable, threadId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM threads WHERE thread_id = $1", [threadId]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

export async function threadExists(db: Queryable, threadId: string): Promise<boolean> {
  const rows = await db.query(`SELECT 1 FROM threads WHERE thread_id = $1`, [threadId]);
  return rows.length > 0;
}

export async function hasActiveRun(db: Queryable, threadId: string): Promise<boolean> {
  const rows = await db.query(`SELECT 1 FROM runs WHERE thread_id = $1 AND ${activeStatusSql()} LIMIT 1`, [threadId]);
  return rows.length > 0;
}

/**
 * Inserts the thread a run creates (stateless, or `if_not_exists: "create"`): busy from
 * the start, as its run is queued in the same transaction.
 */
export async function insertBusyThread(tx: Queryable, threadId: string, metadata: Record<string, unknown>, temporary: boolean): Promise<void> {
  await tx.query(`INSERT INTO threads (thread_id, status, metadata, temporary) VALUES ($1, 'busy', $2::json, $3)`, [threadId, jsonbText(metadata), temporary]);
}

/** A run was queued: the thread is busy and remembers which graph it runs. */
export async function markThreadBusy(tx: Queryable, threadId: string, metadata: Record<string, unknown>): Promise<void> {
  await tx.query(`UPDATE threads SET status = 'busy', metadata = json_merge(metadata, $2::json), updated_at = now() WHERE thread_id = $1`, [
    threadId,
    jsonbText(metadata),
  ]);
}

export async function threadValues(db: Queryable, threadId: string): Promise<unknown> {
  const rows = await db.query<{ values: unknown }>(`SELECT "values" FROM threads WHERE thread_id = $1`, [threadId]);
  return rows[0]?.values ?? null;
}

/** Locks the thread row until the transaction ends (run creation takes the same lock). */
export async function lockThread(tx: Queryable, threadId: string): Promise<ThreadRow | undefined> {
  const rows = await tx.query<ThreadRow>(`SELECT ${COLUMNS} FROM threads WHERE thread_id = $1 FOR UPDATE`, [threadId]);
  return rows[0];
}

export interface SnapshotWrite {
  values: unknown;
  interrupts: Record<string, unknown>;
  error: unknown;
  /** The status when no run is pending or running. */
  settledStatus: Exclude<ThreadStatus, "busy">;
  now: Date;
}

/**
 * Writes a thread's snapshot. `busy` wins whenever a run is still pending or running:
 * the caller holds the thread lock, so no run can be created between this check and
 * the write. A set TTL restarts from `now`: activity keeps a thread alive.
 */
export async function writeSnapshot(tx: Queryable, threadId: string, snapshot: SnapshotWrite): Promise<void> {
  await tx.query(
    `UPDATE threads SET "values" = $2::json, interrupts = $3::json, error = $4::jsonb,
       status = CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = threads.thread_id AND ${activeStatusSql("r.status")})
                     THEN 'busy' ELSE $5 END,
       expires_at = CASE WHEN ttl IS NULL THEN expires_at ELSE $6::timestamptz + make_interval(secs => (ttl->>'ttl_minutes')::float8 * 60) END,
       state_updated_at = now(), updated_at = now()
     WHERE thread_id = $1`,
    [
      threadId,
      jsonbText(snapshot.values),
      jsonbText(snapshot.interrupts),
      snapshot.error == null ? null : jsonbText(snapshot.error),
      snapshot.settledStatus,
      snapshot.now,
    ],
  );
}

/**
 * Claims up to `limit` expired threads for one sweeper: their expiry moves `leaseSeconds`
 * ahead, so a second sweeper (another process) skips them and a sweeper that dies midway
 * leaves them to be retried. Threads with a pending or running run are left alone; their
 * run's end restarts the TTL anyway.
 */
export async function claimExpiredThreads(
  db: Queryable,
  now: Date,
  limit: number,
  leaseSeconds: number,
): Promise<Array<{ thread_id: string; ttl: ThreadTtl }>> {
  return db.query(
    `UPDATE threads SET expires_at = $1::timestamptz + make_interval(secs => $3)
     WHERE thread_id IN (
       SELECT thread_id FROM threads t
       WHERE t.expires_at <= $1 AND t.ttl IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.thread_id AND ${activeStatusSql("r.status")})
       ORDER BY t.expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING thread_id, ttl`,
    [now, limit, leaseSeconds],
  );
}

/**
 * `checkpointer.ttl.default_ttl`: threads created without a TTL (by POST /threads or by a
 * run) get the default one, counted from their last update. Done by the sweeper rather
 * than at every place that creates a thread; idempotent, so sweepers may race.
 */
export async function adoptDefaultTtl(db: Queryable, ttl: ThreadTtl): Promise<void> {
  await db.query(
    `UPDATE threads SET ttl = $1::jsonb, expires_at = updated_at + make_interval(secs => $2)
     WHERE ttl IS NULL AND NOT temporary`,
    [JSON.stringify(ttl), ttl.ttl_minutes * 60],
  );
}

export async function setExpiry(db: Queryable, threadId: string, expiresAt: Date | null): Promise<void> {
  await db.query(`UPDATE threads SET expires_at = $2 WHERE thread_id = $1`, [threadId, expiresAt]);
}

/**
 * Bytes the thread occupies in Slipway's checkpointer tables (0002_checkpoints.sql), as
 * stored: checkpoint and metadata JSON, channel value blobs, pending write blobs.
 */
export async function checkpointStorage(
  db: Queryable,
  threadId: string,
): Promise<{
  checkpoints: { count: number; bytes: number };
  channels: Array<{ channel: string; versions: number; bytes: number }>;
  writes: { count: number; bytes: number };
}> {
  const [checkpoints] = await db.query<{ count: number; bytes: number }>(
    `SELECT count(*)::int AS count, coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0)::bigint AS bytes
     FROM checkpoints WHERE thread_id = $1`,
    [threadId],
  );
  const channels = await db.query<{ channel: string; versions: number; bytes: number }>(
    `SELECT channel, count(*)::int AS versions, coalesce(sum(octet_length(blob)), 0)::bigint AS bytes
     FROM checkpoint_blobs WHERE thread_id = $1 GROUP BY channel ORDER BY channel`,
    [threadId],
  );
  const [writes] = await db.query<{ count: number; bytes: number }>(
    `SELECT count(*)::int AS count, coalesce(sum(octet_length(blob)), 0)::bigint AS bytes FROM checkpoint_writes WHERE thread_id = $1`,
    [threadId],
  );
  const num = (v: unknown) => Number(v ?? 0);
  return {
    checkpoints: { count: num(checkpoints?.count), bytes: num(checkpoints?.bytes) },
    channels: channels.map((c) => ({ channel: c.channel, versions: num(c.versions), bytes: num(c.bytes) })),
    writes: { count: num(writes?.count), bytes: num(writes?.bytes) },
  };
}
