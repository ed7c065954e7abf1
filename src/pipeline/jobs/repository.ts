import type { Queryable } from "../../storage/database.ts";
import { IN_FLIGHT, type RevisionStatus } from "../../controlplane/revisions/state-machine.ts";

/**
 * SQL for revision jobs: an in-flight revision is a job that one control-plane process
 * works on at a time, under a lease it renews.
 *
 * The claim takes the oldest in-flight revision that nobody holds or whose lease ran
 * out, with FOR UPDATE SKIP LOCKED so that two processes never take the same one, and
 * bumps job_attempts: status changes are fenced by (worker, attempt), so a process that
 * lost its lease (paused, partitioned) cannot move a revision another one now owns.
 */
export interface JobClaim {
  revision_id: string;
  deployment_id: string;
  workspace_id: string;
  status: RevisionStatus;
  job_attempts: number;
}

export async function claimJob(q: Queryable, worker: string, leaseMs: number): Promise<JobClaim | undefined> {
  const rows = await q.query<JobClaim>(
    `UPDATE revisions r SET job_worker = $1, job_lease_until = now() + make_interval(secs => $2::float8 / 1000),
            job_attempts = r.job_attempts + 1
      WHERE r.id = (
        SELECT id FROM revisions
         WHERE status = ANY($3::text[]) AND (job_worker IS NULL OR job_lease_until < now())
         ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING r.id AS revision_id, r.deployment_id, r.workspace_id, r.status, r.job_attempts`,
    [worker, leaseMs, IN_FLIGHT],
  );
  return rows[0];
}

/** Renews a lease; false when the job is no longer ours or no longer in flight (interrupted, deleted). */
export async function renewJob(q: Queryable, claim: JobClaim, worker: string, leaseMs: number): Promise<boolean> {
  const rows = await q.query(
    `UPDATE revisions SET job_lease_until = now() + make_interval(secs => $4::float8 / 1000)
      WHERE id = $1 AND job_worker = $2 AND job_attempts = $3 AND status = ANY($5::text[]) RETURNING id`,
    [claim.revision_id, worker, claim.job_attempts, leaseMs, IN_FLIGHT],
  );
  return rows.length === 1;
}

/**
 * At the start of a control plane that owns its database alone (embedded): jobs still
 * held were held by its previous run, which is gone; take them over now instead of
 * after their lease.
 */
export async function releaseAllJobs(q: Queryable): Promise<void> {
  await q.query("UPDATE revisions SET job_worker = NULL, job_lease_until = NULL WHERE status = ANY($1::text[]) AND job_worker IS NOT NULL", [IN_FLIGHT]);
}

/** Lets a job go at once (this process stops): the next claim need not wait for the lease. */
export async function releaseJob(q: Queryable, claim: JobClaim, worker: string): Promise<void> {
  await q.query("UPDATE revisions SET job_worker = NULL, job_lease_until = NULL WHERE id = $1 AND job_worker = $2 AND job_attempts = $3", [
    claim.revision_id,
    worker,
    claim.job_attempts,
  ]);
}

/** The fields of a revision the job needs, sealed secrets included. */
export interface JobRevision {
  id: string;
  deployment_id: string;
  workspace_id: string;
  status: RevisionStatus;
  source: string;
  source_revision_config: {
    repo_ref?: string | null;
    langgraph_config_path?: string | null;
    source_tarball_path?: string | null;
    repo_commit_sha?: string | null;
    image_uri?: string | null;
  };
  resource_spec: Record<string, unknown> | null;
  secrets_sealed: Record<string, string>;
  build_key: string | null;
  /** Why it was made (create, patch, redeploy, push, rotate_credentials). */
  trigger: string | null;
  source_config: {
    integration_id?: string | null;
    repo_url?: string | null;
    install_command?: string | null;
    build_command?: string | null;
  };
}

export async function loadJobRevision(q: Queryable, revisionId: string): Promise<JobRevision | undefined> {
  const rows = await q.query<JobRevision>(
    `SELECT r.id, r.deployment_id, r.workspace_id, r.status, r.source, r.source_revision_config, r.resource_spec,
            r.secrets_sealed, r.build_key, r.trigger, d.source_config
       FROM revisions r JOIN deployments d ON d.id = r.deployment_id WHERE r.id = $1`,
    [revisionId],
  );
  return rows[0];
}

export async function recordCommit(q: Queryable, revisionId: string, commit: string): Promise<void> {
  await q.query(`UPDATE revisions SET source_revision_config = jsonb_set(source_revision_config, '{repo_commit_sha}', to_jsonb($2::text)) WHERE id = $1`, [
    revisionId,
    commit,
  ]);
}

export async function recordBuild(q: Queryable, revisionId: string, buildKey: string): Promise<void> {
  await q.query("UPDATE revisions SET build_key = $2 WHERE id = $1", [revisionId, buildKey]);
}
