import type { Queryable } from "../../storage/database.ts";
import type { CronSortField, OnRunCompleted } from "./schemas.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";

/** A cron row as stored; `toCron` (wire.ts) shapes it for the wire. */
export interface CronRow {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  user_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: Date | null;
  enabled: boolean;
  on_run_completed: OnRunCompleted | null;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  next_run_date: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What may narrow a read or write: the caller's filters (search) and custom auth's (access.ts). */
export interface CronFilter {
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  /** Rows whose metadata holds every pair of each object. */
  metadata?: Array<Record<string, unknown>>;
}

const COLUMNS =
  "cron_id, assistant_id, thread_id, user_id, schedule, timezone, end_time, enabled, on_run_completed, payload, metadata, next_run_date, created_at, updated_at";

export async function insertCron(db: Queryable, cron: Omit<CronRow, "created_at" | "updated_at">): Promise<CronRow> {
  const rows = await db.query<CronRow>(
    `INSERT INTO crons (cron_id, assistant_id, thread_id, user_id, schedule, timezone, end_time, enabled, on_run_completed, payload, metadata, next_run_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::json, $11::json, $12)
     RETURNING ${COLUMNS}`,
    [
      cron.cron_id,
      cron.assistant_id,
      cron.thread_id,
      cron.user_id,
      cron.schedule,
      cron.timezone,
      cron.end_time,
      cron.enabled,
      cron.on_run_completed,
      jsonbText(cron.payload),
      jsonbText(cron.metadata),
      cron.next_run_date,
    ],
  );
  return rows[0];
}

/** WHERE clause and parameters of a filter; `first` is the number of the first parameter. */
function whereOf(filter: CronFilter, first = 1): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(`$${first + params.length - 1}`));
  };
  if (filter.assistantId !== undefined) add((n) => `assistant_id = ${n}::uuid`, filter.assistantId);
  if (filter.threadId !== undefined) add((n) => `thread_id = ${n}::uuid`, filter.threadId);
  if (filter.enabled !== undefined) add((n) => `enabled = ${n}`, filter.enabled);
  for (const pairs of filter.metadata ?? []) add((n) => `metadata::jsonb @> ${n}::jsonb`, jsonbText(pairs));
  return { where: clauses.length ? clauses.join(" AND ") : "true", params };
}

export async function getCron(db: Queryable, cronId: string, filter: CronFilter = {}): Promise<CronRow | undefined> {
  const { where, params } = whereOf(filter, 2);
  const rows = await db.query<CronRow>(`SELECT ${COLUMNS} FROM crons WHERE cron_id = $1 AND ${where}`, [cronId, ...params]);
  return rows[0];
}

/** A cron's metadata alone (custom auth matches its filters against it); `undefined`: no such cron. */
export async function cronMetadata(db: Queryable, cronId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM crons WHERE cron_id = $1", [cronId]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

/** The row, locked for the rest of the transaction (a PATCH reads, decides, then writes it). */
export async function lockCron(tx: Queryable, cronId: string, filter: CronFilter = {}): Promise<CronRow | undefined> {
  const { where, params } = whereOf(filter, 2);
  const rows = await tx.query<CronRow>(`SELECT ${COLUMNS} FROM crons WHERE cron_id = $1 AND ${where} FOR UPDATE`, [cronId, ...params]);
  return rows[0];
}

/** Writes every changeable column of a cron (after lockCron). */
export async function updateCron(tx: Queryable, cron: CronRow): Promise<CronRow> {
  const rows = await tx.query<CronRow>(
    `UPDATE crons SET schedule = $2, timezone = $3, end_time = $4, enabled = $5, on_run_completed = $6,
       payload = $7::json, metadata = $8::json, next_run_date = $9, updated_at = now()
     WHERE cron_id = $1 RETURNING ${COLUMNS}`,
    [
      cron.cron_id,
      cron.schedule,
      cron.timezone,
      cron.end_time,
      cron.enabled,
      cron.on_run_completed,
      jsonbText(cron.payload),
      jsonbText(cron.metadata),
      cron.next_run_date,
    ],
  );
  return rows[0];
}

export async function deleteCron(db: Queryable, cronId: string, filter: CronFilter = {}): Promise<boolean> {
  const { where, params } = whereOf(filter, 2);
  const rows = await db.query(`DELETE FROM crons WHERE cron_id = $1 AND ${where} RETURNING cron_id`, [cronId, ...params]);
  return rows.length > 0;
}

export async function searchCrons(
  db: Queryable,
  filter: CronFilter,
  page: { limit: number; offset: number; sortBy: CronSortField; sortOrder: "asc" | "desc" },
): Promise<{ rows: CronRow[]; total: number }> {
  const { where, params } = whereOf(filter);
  // sortBy and sortOrder come from closed lists (schemas.ts), never from free text.
  const order = `${page.sortBy} ${page.sortOrder === "asc" ? "ASC" : "DESC"} NULLS LAST, cron_id`;
  const rows = await db.query<CronRow & { total: string | number }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM crons WHERE ${where}
     ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, page.limit, page.offset],
  );
  const total = rows.length ? Number(rows[0].total) : await countCrons(db, filter);
  return { rows: rows.map(({ total: _total, ...row }) => row), total };
}

export async function countCrons(db: Queryable, filter: CronFilter): Promise<number> {
  const { where, params } = whereOf(filter);
  const rows = await db.query<{ count: string | number }>(`SELECT count(*) AS count FROM crons WHERE ${where}`, params);
  return Number(rows[0].count);
}

/** A due cron as the scheduler claims it. */
export interface DueCron extends CronRow {
  /** Graph of the cron's assistant (a stateless firing's new thread records it). */
  graph_id: string;
  /** Its assistant's metadata: the first layer of the firing run's metadata. */
  assistant_metadata: Record<string, unknown>;
  /** The database's clock when the claim began: the reference for lateness. */
  db_now: Date;
}

/**
 * Claims the most overdue firing of any cron, or none: the row stays locked until the
 * caller's transaction ends, in which it queues the firing's run and advances
 * `next_run_date` (advanceCron). Commit, and the firing has happened exactly once;
 * roll back or die, and it has not happened at all and is due for the next claimer.
 *
 * Why this shape:
 * - The row lock is the claim. SKIP LOCKED lets every process of a deployment (several
 *   agent servers on one PostgreSQL schema, or on a shared embedded database) look at
 *   the same due crons at once without waiting: one takes a cron, the others pass over
 *   it and take other crons or nothing. No leader election, no lease table.
 * - A process that dies mid-firing (SIGKILL, lost connection) holds its lock only as
 *   long as its connection: PostgreSQL rolls the transaction back when the socket
 *   closes, and the next look by a survivor fires that time, late but once. A lease
 *   would instead keep the firing waiting until it expired, and need a second write.
 * - Queuing the run and advancing in one transaction is what makes a firing neither
 *   lost (advanced without a run) nor doubled (a run without the advance, repeated).
 *   cron_firings' primary key (cron_id, scheduled_for) is the last fence if a bug ever
 *   let two claimers take one time: the second insert fails and rolls its run back.
 * - FOR NO KEY UPDATE: the weakest row lock that still excludes a second claimer; the
 *   advance changes no key, so nothing stronger is needed.
 * - `now()` is the database's clock, the same for every process, whatever theirs say.
 * - One cron per claim, most overdue first: each firing's transaction stays short, and a
 *   cron far behind cannot starve the others.
 */
export async function claimDueCron(tx: Queryable): Promise<DueCron | undefined> {
  const rows = await tx.query<DueCron>(
    `SELECT ${COLUMNS.split(", ")
      .map((c) => `c.${c}`)
      .join(", ")}, a.graph_id, a.metadata AS assistant_metadata, now() AS db_now
     FROM crons c JOIN assistants a ON a.assistant_id = c.assistant_id
     WHERE c.enabled AND c.next_run_date <= now() AND (c.end_time IS NULL OR c.next_run_date <= c.end_time)
     ORDER BY c.next_run_date
     LIMIT 1
     FOR NO KEY UPDATE OF c SKIP LOCKED`,
  );
  return rows[0];
}

/** Moves a claimed cron to its next firing (NULL: none). */
export async function advanceCron(tx: Queryable, cronId: string, next: Date | null): Promise<void> {
  await tx.query("UPDATE crons SET next_run_date = $2 WHERE cron_id = $1", [cronId, next]);
}

interface FiringRecord {
  cron_id: string;
  scheduled_for: Date;
  outcome: "queued" | "rejected";
  run_id: string | null;
  coalesced_until: Date | null;
  fired_by: string;
}

/** Records a firing, and forgets this cron's firings older than a day. */
export async function recordFiring(tx: Queryable, firing: FiringRecord): Promise<void> {
  await tx.query(`INSERT INTO cron_firings (cron_id, scheduled_for, outcome, run_id, coalesced_until, fired_by) VALUES ($1, $2, $3, $4, $5, $6)`, [
    firing.cron_id,
    firing.scheduled_for,
    firing.outcome,
    firing.run_id,
    firing.coalesced_until,
    firing.fired_by,
  ]);
  await tx.query(`DELETE FROM cron_firings WHERE cron_id = $1 AND scheduled_for < $2::timestamptz - interval '1 day'`, [firing.cron_id, firing.scheduled_for]);
}

export async function listFirings(db: Queryable, cronId: string): Promise<Array<FiringRecord & { fired_at: Date }>> {
  return db.query(
    `SELECT cron_id, scheduled_for, outcome, run_id, coalesced_until, fired_by, fired_at FROM cron_firings WHERE cron_id = $1 ORDER BY scheduled_for`,
    [cronId],
  );
}

/**
 * Seconds from now (the database's clock) to the earliest firing of an enabled cron,
 * negative when one is already due (another process may be firing it); undefined when
 * no cron will fire.
 */
export async function secondsUntilNextFiring(db: Queryable): Promise<number | undefined> {
  const rows = await db.query<{ wait: number | null }>(
    `SELECT EXTRACT(EPOCH FROM (min(next_run_date) - clock_timestamp()))::float8 AS wait
     FROM crons WHERE enabled AND next_run_date IS NOT NULL AND (end_time IS NULL OR next_run_date <= end_time)`,
  );
  const wait = rows[0]?.wait;
  return wait === null || wait === undefined ? undefined : Number(wait);
}
