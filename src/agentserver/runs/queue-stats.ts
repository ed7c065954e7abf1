import type { Queryable } from "../../storage/database.ts";

/** The queue as `/metrics` reports it, in the vendor's field names (seconds). */
export interface QueueStats {
  n_pending: number;
  n_running: number;
  pending_runs_wait_time_max_secs: number;
  pending_runs_wait_time_med_secs: number;
  pending_unblocked_runs_wait_time_max_secs: number;
}

/**
 * Counts the deployment's pending and running runs (every process's: the table is shared)
 * and how long the claimable pending ones have waited since they became claimable.
 * "Unblocked": pending runs whose thread has no run executing, so only free workers
 * could take them.
 */
export async function queueStats(db: Queryable): Promise<QueueStats> {
  const [row] = await db.query<{ pending: string; running: string; max_wait: number | null; med_wait: number | null; unblocked_max_wait: number | null }>(
    `WITH live AS (
       SELECT r.status, GREATEST(EXTRACT(EPOCH FROM (now() - r.available_at)), 0)::float8 AS waited,
              r.available_at <= now() AS claimable,
              r.status = 'pending' AND EXISTS (SELECT 1 FROM runs b WHERE b.thread_id = r.thread_id AND b.status = 'running') AS blocked
         FROM runs r WHERE r.status IN ('pending', 'running')
     )
     SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
            count(*) FILTER (WHERE status = 'running') AS running,
            max(waited) FILTER (WHERE status = 'pending' AND claimable) AS max_wait,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY waited) FILTER (WHERE status = 'pending' AND claimable) AS med_wait,
            max(waited) FILTER (WHERE status = 'pending' AND claimable AND NOT blocked) AS unblocked_max_wait
       FROM live`,
  );
  return {
    n_pending: Number(row?.pending ?? 0),
    n_running: Number(row?.running ?? 0),
    pending_runs_wait_time_max_secs: row?.max_wait ?? 0,
    pending_runs_wait_time_med_secs: row?.med_wait ?? 0,
    pending_unblocked_runs_wait_time_max_secs: row?.unblocked_max_wait ?? 0,
  };
}
