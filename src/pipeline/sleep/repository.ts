import type { Queryable } from "../../storage/database.ts";

/** SQL for sleeping deployments (docs/decisions/0039): who may sleep, who sleeps, and when to wake them. */

export interface SleepCandidate {
  id: string;
  /** The deployment's own setting; null: the control plane's default. */
  sleep_after_minutes: number | null;
}

/** Deployments that serve a revision and are awake. */
export async function awakeServedDeployments(q: Queryable): Promise<SleepCandidate[]> {
  return q.query<SleepCandidate>(
    `SELECT id, sleep_after_minutes FROM deployments
      WHERE status <> 'AWAITING_DELETE' AND active_revision_id IS NOT NULL AND sleeping_since IS NULL`,
  );
}

/** Deployments asleep (a restart leaves them so), with when their scheduled work wakes them. */
export async function sleepingDeployments(q: Queryable): Promise<{ id: string; wake_at: Date | null }[]> {
  return q.query(
    `SELECT id, wake_at FROM deployments
      WHERE status <> 'AWAITING_DELETE' AND active_revision_id IS NOT NULL AND sleeping_since IS NOT NULL`,
  );
}

export async function markSleeping(q: Queryable, id: string, since: Date, wakeAt: Date | null): Promise<void> {
  await q.query("UPDATE deployments SET sleeping_since = $2, wake_at = $3 WHERE id = $1", [id, since, wakeAt]);
}

export async function markAwake(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE deployments SET sleeping_since = NULL, wake_at = NULL WHERE id = $1 AND sleeping_since IS NOT NULL", [id]);
}
