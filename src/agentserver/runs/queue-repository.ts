import type { Queryable } from "../../storage/database.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import { putBatchCall } from "../checkpointer/sql.ts";
import type { RunStatus } from "./schemas.ts";
import { RUN_COLUMNS, RUNS_COLUMNS, type RunRow } from "./repository.ts";

/*
 * The run queue's SQL: queueing a run (and claiming it in the same statement), claiming
 * the next one, leases (renewal, expiry, hand-back), recording a run's end, and what the
 * idle check reads. Rows, listings, cancellation and kept output are in repository.ts.
 */

/** The fields that say how a run ended, to check whether our own write of its end landed. */
export async function runEndOf(db: Queryable, runId: string): Promise<{ status: RunStatus; attempt: number; lease_owner: string | null } | undefined> {
  const rows = await db.query<{ status: RunStatus; attempt: number; lease_owner: string | null }>(
    "SELECT status, attempt, lease_owner FROM runs WHERE run_id = $1",
    [runId],
  );
  return rows[0];
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
 * the thread's new snapshot with it, in one statement (`finish_run`, migrations 0009 and
 * 0025: the thread is locked before the run, the order every other writer uses).
 * Without a snapshot (it could not be computed) only the run is recorded.
 *
 * The same statement may carry the run's held-back checkpoint saves (`saves`, decision
 * 0021), written first, and claim the thread's next run for the same worker
 * (`claimNext`, migration 0023), once the end is recorded as ours. The fence is the
 * attempt's worker and number.
 */
export async function finishRunWithSnapshot(
  db: Queryable,
  attempt: { runId: string; threadId: string; workerId: string; attempt: number },
  end: {
    outcome: { status: RunStatus; error?: unknown };
    snapshot?: { values: unknown; interrupts: unknown; error: unknown; settledStatus: string; now: Date };
    saves?: unknown[];
    claimNext?: { leaseSeconds: number };
  },
): Promise<{ owned: boolean; next?: ClaimedRun }> {
  const { outcome, snapshot, saves, claimNext } = end;
  const json = (value: unknown) => (value === undefined || value === null ? null : jsonbText(value));
  const finish = `finish_run($1, $2, $3, $4, $5::jsonb, $6, $7, $8::json, $9::json, $10::jsonb, $11, $12)`;
  // The CTEs are read before the rows that depend on them: the saves, then the end, then the claim.
  const sql = `WITH ${saves ? `saved AS (${putBatchCall(14)}), ` : ""}
       ended AS (SELECT ${finish} AS owned${saves ? " FROM saved" : ""})
     SELECT ended.owned, ${RUN_COLUMNS.split(", ")
       .map((c) => `n.${c}`)
       .join(", ")},
       ${moreOnThreadSql("n")}
     FROM ended LEFT JOIN LATERAL claim_next_of_thread(CASE WHEN ended.owned AND $13::float8 IS NOT NULL THEN $6::uuid END, $2, $13::float8) n ON true`;
  const rows = await db.query<RunRow & { owned: boolean; more_on_thread: boolean }>(sql, [
    attempt.runId,
    attempt.workerId,
    attempt.attempt,
    outcome.status,
    json(outcome.error),
    attempt.threadId,
    snapshot !== undefined,
    snapshot ? jsonbText(snapshot.values) : null,
    snapshot ? jsonbText(snapshot.interrupts) : null,
    snapshot ? json(snapshot.error) : null,
    snapshot?.settledStatus ?? null,
    snapshot?.now ?? null,
    claimNext?.leaseSeconds ?? null,
    ...(saves ?? []),
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

/**
 * Announces a queued run on `channel` when the transaction `tx` commits: PostgreSQL holds
 * a NOTIFY until then and drops it on rollback, as enqueue_run's does (migration 0022).
 */
export async function announceAtCommit(tx: Queryable, channel: string, payload: string): Promise<void> {
  await tx.query("SELECT pg_notify($1, $2)", [channel, payload]);
}
