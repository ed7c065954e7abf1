import type { Queryable } from "../../storage/database.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import type { MultitaskStrategy, Run, RunStatus } from "./schemas.ts";
import { ACTIVE_STATUSES, activeStatusSql } from "../run-statuses.ts";
import type { RunEvent } from "../stream/run-streams.ts";

/*
 * Runs as records: their rows, listings, cancel requests, kept output (run_events) and
 * stateless results. The queue (claims, leases, queueing and ending statements) is in
 * queue-repository.ts.
 */

/** A run row as stored; `toRun` shapes it for the wire. */
export interface RunRow {
  run_id: string;
  seq: number;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
  error: unknown;
  attempt: number;
  available_at: Date;
  lease_owner: string | null;
  cancel_action: "interrupt" | "rollback" | null;
  created_at: Date;
  updated_at: Date;
}

/** What a run was asked to do, kept so any worker (after a crash too) can execute it. */
export interface RunKwargs {
  input: unknown;
  command: Record<string, unknown> | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  stream_mode: string[];
  stream_subgraphs: boolean;
  stream_resumable: boolean;
  interrupt_before: string[] | "*" | null;
  interrupt_after: string[] | "*" | null;
  checkpoint_id: string | null;
  checkpoint_ns: string;
  durability: "sync" | "async" | "exit";
  webhook: string | null;
  on_disconnect: "cancel" | "continue";
  /** Stateless runs: remove the thread when the run ends. */
  temporary: boolean;
  feedback_keys: string[] | null;
}

export const RUN_COLUMNS =
  "run_id, seq, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, error, attempt, available_at, lease_owner, cancel_action, created_at, updated_at";
/** RUN_COLUMNS of the `runs` table by name, for statements that join it to a table with a `run_id` too. */
export const RUNS_COLUMNS = RUN_COLUMNS.split(", ")
  .map((c) => `runs.${c}`)
  .join(", ");

export function toRun(row: RunRow): Run {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    status: row.status,
    metadata: row.metadata ?? {},
    kwargs: row.kwargs as unknown as Record<string, unknown>,
    multitask_strategy: row.multitask_strategy,
  };
}

export async function insertRun(
  db: Queryable,
  run: Pick<RunRow, "run_id" | "thread_id" | "assistant_id" | "metadata" | "kwargs" | "multitask_strategy"> & { afterSeconds: number },
): Promise<RunRow> {
  const rows = await db.query<RunRow>(
    `INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, available_at)
     VALUES ($1, $2, $3, $4::json, $5::json, $6, now() + make_interval(secs => $7))
     RETURNING ${RUN_COLUMNS}`,
    [run.run_id, run.thread_id, run.assistant_id, jsonbText(run.metadata), jsonbText(run.kwargs), run.multitask_strategy, run.afterSeconds],
  );
  return rows[0];
}

export async function getRun(db: Queryable, runId: string, threadId?: string): Promise<RunRow | undefined> {
  const rows = threadId
    ? await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 AND thread_id = $2`, [runId, threadId])
    : await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId]);
  return rows[0];
}

/** The thread a run belongs to (custom auth decides on a run by its thread's metadata). */
export async function threadOfRun(db: Queryable, runId: string): Promise<string | undefined> {
  const rows = await db.query<{ thread_id: string }>("SELECT thread_id FROM runs WHERE run_id = $1", [runId]);
  return rows[0]?.thread_id;
}

export async function listRuns(db: Queryable, threadId: string, options: { limit: number; offset: number; status?: RunStatus }): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs
     WHERE thread_id = $1 AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
    [threadId, options.status ?? null, options.limit, options.offset],
  );
}

/** Runs of a thread still waiting or executing, oldest first. */
export async function activeRunsOfThread(db: Queryable, threadId: string): Promise<RunRow[]> {
  return db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND ${activeStatusSql()} ORDER BY seq`, [threadId]);
}

export async function deleteRun(db: Queryable, runId: string): Promise<void> {
  await db.query("DELETE FROM runs WHERE run_id = $1", [runId]);
  await db.query("DELETE FROM run_events WHERE run_id = $1", [runId]);
}

/** Keeps a resumable run's output so a client can replay it after the run ended. */
export async function persistRunEvents(db: Queryable, runId: string, events: RunEvent[]): Promise<void> {
  const chunkSize = 500;
  for (let start = 0; start < events.length; start += chunkSize) {
    const slice = events.slice(start, start + chunkSize);
    const params: unknown[] = [runId];
    const rows = slice.map((e, i) => {
      params.push(e.id, e.event, jsonbText(e.data ?? null));
      return `($1, $${i * 3 + 2}, $${i * 3 + 3}, $${i * 3 + 4}::json)`;
    });
    await db.query(`INSERT INTO run_events (run_id, seq, event, data) VALUES ${rows.join(", ")} ON CONFLICT DO NOTHING`, params);
  }
}

/** A resumable run's kept output after event `afterId`, in order, a page at a time: a replay holds one page, not the run. */
export async function* loadRunEvents(db: Queryable, runId: string, afterId: number, pageSize = 500): AsyncGenerator<RunEvent> {
  for (let after = afterId; ; ) {
    const page = await db.query<RunEvent>("SELECT seq AS id, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [
      runId,
      after,
      pageSize,
    ]);
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.id;
  }
}

/** Marks a cancel request on a run; the worker holding it reads this when it stops. */
export async function requestCancel(db: Queryable, runId: string, action: "interrupt" | "rollback"): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>(
    `UPDATE runs SET cancel_action = $2, updated_at = now()
     WHERE run_id = $1 AND ${activeStatusSql()} RETURNING ${RUN_COLUMNS}`,
    [runId, action],
  );
  return rows[0];
}

/**
 * Removes a run only while it is still pending (rollback of a run that never started);
 * false when a worker claimed it meanwhile. Its persisted events go with it (cascade).
 */
export async function deletePendingRun(db: Queryable, runId: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM runs WHERE run_id = $1 AND status = 'pending' RETURNING run_id`, [runId]);
  return rows.length > 0;
}

/** A pending run that is cancelled never starts: it ends `interrupted` at once. */
export async function interruptPendingRun(db: Queryable, runId: string): Promise<boolean> {
  const rows = await db.query(`UPDATE runs SET status = 'interrupted', updated_at = now() WHERE run_id = $1 AND status = 'pending' RETURNING run_id`, [runId]);
  return rows.length > 0;
}

/** A stateless run's outcome, kept after its thread and run row are gone (migration 0008). */
export interface StoredRunResult {
  run_id: string;
  status: RunStatus;
  values: unknown;
  error: unknown;
}

export async function saveRunResult(db: Queryable, result: StoredRunResult): Promise<void> {
  await db.query(
    `INSERT INTO run_results (run_id, status, "values", error) VALUES ($1, $2, $3::json, $4::jsonb)
     ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, "values" = EXCLUDED."values", error = EXCLUDED.error`,
    [result.run_id, result.status, result.values === undefined ? null : jsonbText(result.values), result.error == null ? null : jsonbText(result.error)],
  );
}

export async function readRunResult(db: Queryable, runId: string): Promise<StoredRunResult | undefined> {
  const rows = await db.query<StoredRunResult>(`SELECT run_id, status, "values", error FROM run_results WHERE run_id = $1`, [runId]);
  return rows[0];
}

/** Stored results are for waiters that are already waiting: ten minutes is plenty. */
export async function deleteOldRunResults(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM run_results WHERE created_at < now() - interval '10 minutes'`);
}

export async function cancelActionOf(db: Queryable, runId: string): Promise<"interrupt" | "rollback" | null | undefined> {
  const rows = await db.query<{ cancel_action: "interrupt" | "rollback" | null }>("SELECT cancel_action FROM runs WHERE run_id = $1", [runId]);
  return rows[0]?.cancel_action;
}

/** Runs to cancel for POST /runs/cancel, by ids or by thread and status. */
export async function findRunsToCancel(
  db: Queryable,
  filter: { runIds?: string[]; threadId?: string; status: "pending" | "running" | "all" },
): Promise<RunRow[]> {
  const statuses = filter.status === "all" ? [...ACTIVE_STATUSES] : [filter.status];
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs
     WHERE status = ANY($1::text[])
       AND ($2::uuid[] IS NULL OR run_id = ANY($2::uuid[]))
       AND ($3::uuid IS NULL OR thread_id = $3)
     ORDER BY seq`,
    [statuses, filter.runIds ?? null, filter.threadId ?? null],
  );
}

/** Which of these runs are still pending or running. */
export async function stillActiveRunIds(db: Queryable, runIds: string[]): Promise<string[]> {
  const rows = await db.query<{ run_id: string }>(`SELECT run_id FROM runs WHERE run_id = ANY($1::uuid[]) AND ${activeStatusSql()}`, [runIds]);
  return rows.map((row) => row.run_id);
}

/** Ids of a thread's runs still waiting or executing, oldest first. */
export async function activeRunIdsOfThread(db: Queryable, threadId: string): Promise<string[]> {
  const rows = await db.query<{ run_id: string }>(`SELECT run_id FROM runs WHERE thread_id = $1 AND ${activeStatusSql()} ORDER BY seq`, [threadId]);
  return rows.map((row) => row.run_id);
}
