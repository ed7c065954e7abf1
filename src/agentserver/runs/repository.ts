import type { Queryable } from "../../storage/database.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import type { MultitaskStrategy, Run, RunStatus } from "./schemas.ts";
import { ACTIVE_STATUSES, activeStatusSql } from "../run-statuses.ts";
import { putBatchCall } from "../checkpointer/sql.ts";
import type { RunEvent } from "../stream/run-streams.ts";

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

const RUN_COLUMNS = "run_id, seq, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, error, attempt, available_at, lease_owner, cancel_action, created_at, updated_at";
/** RUN_COLUMNS of the `runs` table by name, for statements that join it to a table with a `run_id` too. */
const RUNS_COLUMNS = RUN_COLUMNS.split(", ").map((c) => `runs.${c}`).join(", ");

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

export async function listRuns(
  db: Queryable,
  threadId: string,
  options: { limit: number; offset: number; status?: RunStatus },
): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs
     WHERE thread_id = $1 AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
    [threadId, options.status ?? null, options.limit, options.offset],
  );
}

/** Runs of a thread still waiting or executing, oldest first. */
export async function activeRunsOfThread(db: Queryable, threadId: string): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND ${activeStatusSql()} ORDER BY seq`,
    [threadId],
  );
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
    const page = await db.query<RunEvent>(
      "SELECT seq AS id, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
      [runId, after, pageSize],
    );
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

/** The fields that say how a run ended, to check whether our own write of its end landed. */
export async function runEndOf(db: Queryable, runId: string): Promise<{ status: RunStatus; attempt: number; lease_owner: string | null } | undefined> {
  const rows = await db.query<{ status: RunStatus; attempt: number; lease_owner: string | null }>(
    "SELECT status, attempt, lease_owner FROM runs WHERE run_id = $1",
    [runId],
  );
  return rows[0];
}

/** A pending run that is cancelled never starts: it ends `interrupted` at once. */
export async function interruptPendingRun(db: Queryable, runId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE runs SET status = 'interrupted', updated_at = now() WHERE run_id = $1 AND status = 'pending' RETURNING run_id`,
    [runId],
  );
  return rows.length > 0;
}

/** A claimed run, and whether more runs of its thread wait behind it (the worker claims again when it ends). */
export interface ClaimedRun {
  run: RunRow;
  moreOnThread: boolean;
}

/** `more_on_thread` of the run under `alias`: a pending run of its thread queued after it. */
const moreOnThreadSql = (alias: string) =>
  `EXISTS (SELECT 1 FROM runs w WHERE w.thread_id = ${alias}.thread_id AND w.status = 'pending' AND w.seq > ${alias}.seq) AS more_on_thread`;

function claimedRun(row: (RunRow & { more_on_thread: boolean }) | undefined): ClaimedRun | undefined {
  if (!row) return undefined;
  const { more_on_thread: moreOnThread, ...run } = row;
  return { run, moreOnThread };
}

/**
 * Claims the next run a worker may execute, or none.
 *
 * A run is eligible when it is pending, due (available_at), and first in its thread's
 * queue: no run of the same thread is running and no earlier pending one exists. This
 * is what makes `enqueue` FIFO and one-at-a-time per thread while runs of different
 * threads go in parallel. FOR UPDATE SKIP LOCKED lets several workers (and processes)
 * claim concurrently without waiting on each other's candidate rows; the partial unique
 * index runs_one_running_per_thread is the last fence if two of them still pick runs
 * of one thread (the loser gets a unique violation and simply tries again).
 *
 * Also says whether more runs of the thread are pending, so the worker knows to claim
 * again when this one ends.
 *
 * We tried "claim by thread row lock" first: it serialises all claimers on hot threads
 * and needs a second query; the NOT EXISTS form is one statement and index-backed.
 */
export async function claimNextRun(db: Queryable, workerId: string, leaseSeconds: number): Promise<ClaimedRun | undefined> {
  const rows = await db.query<RunRow & { more_on_thread: boolean }>(
    `WITH candidate AS (
       SELECT r.run_id FROM runs r
       WHERE r.status = 'pending' AND r.available_at <= now()
         AND NOT EXISTS (
           SELECT 1 FROM runs x
           WHERE x.thread_id = r.thread_id
             AND (x.status = 'running' OR (x.status = 'pending' AND x.seq < r.seq)))
       ORDER BY r.seq
       LIMIT 1
       FOR UPDATE OF r SKIP LOCKED
     )
     UPDATE runs SET status = 'running', attempt = runs.attempt + 1, lease_owner = $1,
       lease_expires_at = now() + make_interval(secs => $2), updated_at = now()
     FROM candidate WHERE runs.run_id = candidate.run_id
     RETURNING ${RUNS_COLUMNS}, ${moreOnThreadSql("runs")}`,
    [workerId, leaseSeconds],
  );
  return claimedRun(rows[0]);
}

/**
 * Queues a run in one statement (`enqueue_run`, migrations 0007, 0021, 0022, 0025) when no multitask
 * decision is needed; `undefined` (nothing written) sends the caller to the general,
 * transactional path: thread missing or taken, or an active run under reject,
 * interrupt or rollback.
 */
export async function enqueueRunFast(
  db: Queryable,
  run: Pick<RunRow, "run_id" | "thread_id" | "assistant_id" | "metadata" | "kwargs" | "multitask_strategy"> & {
    afterSeconds: number;
    newThread: boolean;
    threadMetadata: Record<string, unknown>;
    /** The assistant's metadata: the run's metadata is it, then the thread's, then the run's own (migration 0021). */
    assistantMetadata: Record<string, unknown>;
    /** Claim the run for this worker when its thread is idle and it is due now (migration 0022). */
    claimFor?: { workerId: string; leaseSeconds: number };
    /** Announce it on this channel in the same statement (a PostgreSQL server; see 0022). */
    announceOn?: string;
    /**
     * The assistant as it was read: queued only if it still is (migration 0024), else the
     * statement fails with SWA01 (`isStaleAssistant`).
     */
    assistantStamp?: { version: number; updatedAt: string };
  },
): Promise<{ run: RunRow; startsEmpty: boolean } | undefined> {
  const rows = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS}
     FROM enqueue_run($1, $2, $3, $4, $5::json, $6, $7::json, $8::json, $9, $10, $11::json, $12, $13, $14, $15::integer, $16::timestamptz) r`,
    [
      run.run_id,
      run.thread_id,
      run.newThread,
      run.kwargs.temporary,
      jsonbText(run.threadMetadata),
      run.assistant_id,
      jsonbText(run.metadata),
      jsonbText(run.kwargs),
      run.multitask_strategy,
      run.afterSeconds,
      jsonbText(run.assistantMetadata),
      run.claimFor?.workerId ?? null,
      run.claimFor?.leaseSeconds ?? 0,
      run.announceOn ?? null,
      run.assistantStamp?.version ?? null,
      run.assistantStamp?.updatedAt ?? null,
    ],
  );
  const row = rows[0];
  if (!row) return undefined;
  // Claimed here on a thread with no root checkpoint: no other writer can add one before
  // the run starts (state updates are refused while it is active), so its first read of
  // the thread needs no statement (run-tail.ts, StartingPoint). A thread this statement
  // created has none. For another, the look is a statement of its own: inside the queueing
  // statement it would read that statement's snapshot, older than the thread's lock
  // enqueue_run waited for, and miss the checkpoint of a run that ended meanwhile (on a
  // PostgreSQL server the next run then started from an empty thread).
  const startsEmpty = row.status === "running" && (run.newThread || !(await hasRootCheckpoint(db, row.thread_id)));
  return { run: row, startsEmpty };
}

/** Whether the thread has a root checkpoint (an index probe, not a read of it). */
async function hasRootCheckpoint(db: Queryable, threadId: string): Promise<boolean> {
  const rows = await db.query<{ found: boolean }>(
    "SELECT (SELECT true FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' LIMIT 1) IS NOT NULL AS found",
    [threadId],
  );
  return rows[0]?.found === true;
}

/** The queueing statement found the run's assistant changed or gone since it was read (migration 0024). */
export function isStaleAssistant(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "SWA01";
}

/**
 * Records how a run ended, only if this worker still owns that attempt (a worker whose
 * lease expired and whose run was re-claimed must not overwrite the new outcome), and
 * the thread's new snapshot with it, in one statement (`finish_run`, migrations 0007,
 * 0009 and 0025: the thread is locked before the run, the order every other writer uses).
 * Without a snapshot (it could not be computed) only the run is recorded.
 *
 * The same statement may carry the run's held-back checkpoint saves (`saves`, decision
 * 0021), written first, and claim the thread's next run for the same worker
 * (`claimNext`, migration 0023), once the end is recorded as ours.
 */
export async function finishRunWithSnapshot(
  db: Queryable,
  run: { runId: string; threadId: string },
  fence: { workerId: string; attempt: number },
  outcome: { status: RunStatus; error?: unknown },
  snapshot: { values: unknown; interrupts: unknown; error: unknown; settledStatus: string; now: Date } | undefined,
  extra: { saves?: unknown[]; claimNext?: { leaseSeconds: number } } = {},
): Promise<{ owned: boolean; next?: ClaimedRun }> {
  const json = (value: unknown) => (value === undefined || value === null ? null : jsonbText(value));
  const finish = `finish_run($1, $2, $3, $4, $5::jsonb, $6, $7, $8::json, $9::json, $10::jsonb, $11, $12)`;
  // The CTEs are read before the rows that depend on them: the saves, then the end, then the claim.
  const sql = `WITH ${extra.saves ? `saved AS (${putBatchCall(14)}), ` : ""}
       ended AS (SELECT ${finish} AS owned${extra.saves ? " FROM saved" : ""})
     SELECT ended.owned, ${RUN_COLUMNS.split(", ").map((c) => `n.${c}`).join(", ")},
       ${moreOnThreadSql("n")}
     FROM ended LEFT JOIN LATERAL claim_next_of_thread(CASE WHEN ended.owned AND $13::float8 IS NOT NULL THEN $6::uuid END, $2, $13::float8) n ON true`;
  const rows = await db.query<RunRow & { owned: boolean; more_on_thread: boolean }>(sql, [
    run.runId,
    fence.workerId,
    fence.attempt,
    outcome.status,
    json(outcome.error),
    run.threadId,
    snapshot !== undefined,
    snapshot ? jsonbText(snapshot.values) : null,
    snapshot ? jsonbText(snapshot.interrupts) : null,
    snapshot ? json(snapshot.error) : null,
    snapshot?.settledStatus ?? null,
    snapshot?.now ?? null,
    extra.claimNext?.leaseSeconds ?? null,
    ...(extra.saves ?? []),
  ]);
  const row = rows[0];
  if (!row?.owned) return { owned: false };
  const { owned: _owned, ...claimed } = row;
  return { owned: true, next: row.run_id ? claimedRun(claimed) : undefined };
}

/**
 * The run of a thread running under this worker's lease, if any: what a run's end claimed
 * for the worker when the answer to that statement was lost (see finishRunWithSnapshot).
 */
export async function nextRunLeasedTo(db: Queryable, threadId: string, workerId: string): Promise<ClaimedRun | undefined> {
  const rows = await db.query<RunRow & { more_on_thread: boolean }>(
    `SELECT ${RUN_COLUMNS}, ${moreOnThreadSql("runs")} FROM runs WHERE thread_id = $1 AND status = 'running' AND lease_owner = $2`,
    [threadId, workerId],
  );
  return claimedRun(rows[0]);
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

/** Whether a run executes, or waits to be claimed now (not a delayed one). */
export async function anyRunUnderway(db: Queryable): Promise<boolean> {
  const rows = await db.query<{ underway: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'running' OR (status = 'pending' AND available_at <= now())) AS underway`,
  );
  return rows[0]?.underway === true;
}

/** Seconds until the next delayed run becomes due, if any. */
export async function secondsUntilNextDueRun(db: Queryable): Promise<number | undefined> {
  const rows = await db.query<{ wait: number | null }>(
    `SELECT EXTRACT(EPOCH FROM (min(available_at) - now()))::float8 AS wait FROM runs WHERE status = 'pending' AND available_at > now()`,
  );
  const wait = rows[0]?.wait;
  return wait === null || wait === undefined ? undefined : Math.max(0, Number(wait));
}

/**
 * Extends the leases of the runs this worker is executing, and only those: a run whose
 * end could not be recorded has left the worker, and its lease must run out so that the
 * sweeper hands it to another attempt.
 */
export async function renewLeases(db: Queryable, workerId: string, runIds: string[], leaseSeconds: number): Promise<void> {
  // Rows are locked in run_id order, as the sweeper locks them: two multi-row updates
  // taking the same rows in different orders could deadlock.
  await db.query(
    `WITH mine AS (
       SELECT run_id FROM runs
       WHERE lease_owner = $1 AND status = 'running' AND run_id = ANY($3::uuid[])
       ORDER BY run_id FOR UPDATE
     )
     UPDATE runs SET lease_expires_at = now() + make_interval(secs => $2) FROM mine WHERE runs.run_id = mine.run_id`,
    [workerId, leaseSeconds, runIds],
  );
}

/**
 * Returns runs whose worker stopped renewing (crashed, killed, partitioned) to the
 * queue. Their attempt number goes up when re-claimed, which fences the old worker.
 */
export async function requeueExpiredLeases(db: Queryable, onlyOwnerNot?: string): Promise<RunRow[]> {
  // In run_id order like renewLeases; rows another sweeper (or a renewal) holds are
  // skipped: the other sweeper takes them, and a renewed lease is not expired.
  return db.query<RunRow>(
    `WITH expired AS (
       SELECT run_id FROM runs
       WHERE status = 'running' AND (lease_expires_at < now() OR ($1::text IS NOT NULL AND lease_owner <> $1))
       ORDER BY run_id FOR UPDATE SKIP LOCKED
     )
     UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
     FROM expired WHERE runs.run_id = expired.run_id
     RETURNING ${RUNS_COLUMNS}`,
    [onlyOwnerNot ?? null],
  );
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

/**
 * Gives a run this worker holds back to the queue (a shutdown aborted it), fenced by
 * worker and attempt: false when the run is no longer ours.
 */
export async function handBackRun(db: Queryable, runId: string, fence: { workerId: string; attempt: number }): Promise<boolean> {
  const rows = await db.query(
    `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL
     WHERE run_id = $1 AND lease_owner = $2 AND attempt = $3 RETURNING run_id`,
    [runId, fence.workerId, fence.attempt],
  );
  return rows.length > 0;
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

/**
 * Announces a queued run on `channel` when the transaction `tx` commits: PostgreSQL holds
 * a NOTIFY until then and drops it on rollback, as enqueue_run's does (migration 0022).
 */
export async function announceAtCommit(tx: Queryable, channel: string, payload: string): Promise<void> {
  await tx.query("SELECT pg_notify($1, $2)", [channel, payload]);
}
