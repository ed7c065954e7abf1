import type { Queryable } from "../../storage/database.ts";
import type { DeploymentSource, SourceRevisionConfig, SecretReference } from "../deployments/schemas.ts";
import type { ResourceSpec } from "../deployments/resource-spec.ts";
import { IN_FLIGHT, type RevisionStatus, type Sibling } from "./state-machine.ts";

/** SQL for revisions. Every statement names the workspace: another workspace's row is a missing row. */

export interface RevisionRow {
  id: string;
  deployment_id: string;
  status: RevisionStatus;
  status_message: string | null;
  source: DeploymentSource;
  source_revision_config: SourceRevisionConfig;
  resource_spec: ResourceSpec | null;
  secret_names: string[];
  secret_references: SecretReference[] | null;
  created_at: Date | string;
  updated_at: Date | string;
}

interface NewRevision {
  id: string;
  deploymentId: string;
  workspaceId: string;
  status: RevisionStatus;
  statusMessage: string | null;
  source: DeploymentSource;
  sourceRevisionConfig: SourceRevisionConfig;
  resourceSpec: ResourceSpec | null;
  secretNames: string[];
  secretsSealed: Record<string, string>;
  secretReferences: SecretReference[] | null;
  trigger: string | null;
  notBefore: string | null;
  buildKey: string | null;
  now: string;
}

// Read paths list these columns only: secrets_sealed stays out of every API answer.
const COLUMNS = `id, deployment_id, status, status_message, source, source_revision_config, resource_spec,
  secret_names, secret_references, created_at, updated_at`;

export async function insertRevision(q: Queryable, r: NewRevision): Promise<void> {
  await q.query(
    `INSERT INTO revisions (id, deployment_id, workspace_id, status, status_message, source, source_revision_config,
       resource_spec, secret_names, secrets_sealed, secret_references, trigger, not_before, build_key, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11::jsonb, $12, $13, $14, $15, $15)`,
    [
      r.id,
      r.deploymentId,
      r.workspaceId,
      r.status,
      r.statusMessage,
      r.source,
      JSON.stringify(r.sourceRevisionConfig),
      json(r.resourceSpec),
      JSON.stringify(r.secretNames),
      JSON.stringify(r.secretsSealed),
      json(r.secretReferences),
      r.trigger,
      r.notBefore,
      r.buildKey,
      r.now,
    ],
  );
}

export async function getRevision(q: Queryable, workspaceId: string, deploymentId: string, revisionId: string): Promise<RevisionRow | undefined> {
  const rows = await q.query<RevisionRow>(`SELECT ${COLUMNS} FROM revisions WHERE workspace_id = $1 AND deployment_id = $2 AND id = $3`, [
    workspaceId,
    deploymentId,
    revisionId,
  ]);
  return rows[0];
}

export async function listRevisions(
  q: Queryable,
  workspaceId: string,
  deploymentId: string,
  page: { statuses?: RevisionStatus[]; limit: number; offset: number },
): Promise<RevisionRow[]> {
  // Latest first by creation order (seq), which holds even when created_at ties.
  return q.query<RevisionRow>(
    `SELECT ${COLUMNS} FROM revisions
      WHERE workspace_id = $1 AND deployment_id = $2 AND ($3::text[] IS NULL OR status = ANY($3::text[]))
      ORDER BY seq DESC LIMIT $4 OFFSET $5`,
    [workspaceId, deploymentId, page.statuses ?? null, page.limit, page.offset],
  );
}

/** The revisions the queue rule looks at (waiting or in flight), oldest first. */
export async function activeSiblings(q: Queryable, workspaceId: string, deploymentId: string): Promise<Sibling[]> {
  return q.query<Sibling>(
    `SELECT id, status, not_before FROM revisions
      WHERE workspace_id = $1 AND deployment_id = $2 AND status = ANY($3::text[])
      ORDER BY seq ASC`,
    [workspaceId, deploymentId, ["QUEUED", ...IN_FLIGHT]],
  );
}

export async function setStatus(
  q: Queryable,
  workspaceId: string,
  ids: readonly string[],
  status: RevisionStatus,
  message: string | null,
  now: string,
): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE revisions SET status = $3, status_message = $4, updated_at = $5
      WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
    [workspaceId, ids, status, message, now],
  );
}

/** Moves every revision of these deployments that is in one of `from` to `to` (the caller checked the step: `mayBecome`). */
export async function setStatusOfDeployments(
  q: Queryable,
  workspaceId: string,
  deploymentIds: readonly string[],
  change: { from: readonly RevisionStatus[]; to: RevisionStatus; message: string | null; now: string },
): Promise<void> {
  if (deploymentIds.length === 0) return;
  await q.query(
    `UPDATE revisions SET status = $4, status_message = $5, updated_at = $6
      WHERE workspace_id = $1 AND deployment_id = ANY($2::uuid[]) AND status = ANY($3::text[])`,
    [workspaceId, deploymentIds, change.from, change.to, change.message, change.now],
  );
}

/** The build a revision ran, if it got that far. */
export async function getBuildKey(q: Queryable, workspaceId: string, revisionId: string): Promise<string | null> {
  const rows = await q.query<{ build_key: string | null }>("SELECT build_key FROM revisions WHERE workspace_id = $1 AND id = $2", [workspaceId, revisionId]);
  return rows[0]?.build_key ?? null;
}

/** Does this pipeline worker still hold the revision's job at this attempt? */
export async function holdsJob(q: Queryable, revisionId: string, worker: string, attempt: number): Promise<boolean> {
  const rows = await q.query("SELECT 1 FROM revisions WHERE id = $1 AND job_worker = $2 AND job_attempts = $3", [revisionId, worker, attempt]);
  return rows.length === 1;
}

/** Deployments with a waiting revision that is due and nothing in flight. */
export async function deploymentsWithDueRevisions(q: Queryable, now: string): Promise<{ workspace_id: string; deployment_id: string }[]> {
  return q.query(
    `SELECT DISTINCT r.workspace_id, r.deployment_id FROM revisions r
      WHERE r.status = 'QUEUED' AND (r.not_before IS NULL OR r.not_before <= $1)
        AND NOT EXISTS (SELECT 1 FROM revisions f WHERE f.deployment_id = r.deployment_id AND f.status = ANY($2::text[]))`,
    [now, IN_FLIGHT],
  );
}

/** The sealed secrets of a revision, for carrying them to the next revision or for the pipeline. */
export async function getSealedSecrets(
  q: Queryable,
  workspaceId: string,
  revisionId: string,
): Promise<{ names: string[]; sealed: Record<string, string> } | undefined> {
  const rows = await q.query<{ secret_names: string[]; secrets_sealed: Record<string, string> }>(
    `SELECT secret_names, secrets_sealed FROM revisions WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, revisionId],
  );
  return rows[0] && { names: rows[0].secret_names, sealed: rows[0].secrets_sealed };
}

/**
 * Channel on which the control plane announces that a revision of a deployment is ready to
 * start (a new CREATING revision). The pipeline listens here instead of polling; the payload
 * is `<workspace_id>:<deployment_id>:<revision_id>`. Sent inside the caller's transaction,
 * so PostgreSQL delivers it only on commit.
 */
export const REVISION_READY_CHANNEL = "slipway_revision_ready";

export async function announceRevisionReady(q: Queryable, workspaceId: string, deploymentId: string, revisionId: string): Promise<void> {
  await q.query("SELECT pg_notify($1, $2)", [REVISION_READY_CHANNEL, `${workspaceId}:${deploymentId}:${revisionId}`]);
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
