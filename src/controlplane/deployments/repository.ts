import type { Queryable } from "../../storage/database.ts";
import { IN_FLIGHT } from "../revisions/state-machine.ts";
import type { ResourceSpec } from "./resource-spec.ts";
import type { DeploymentSource, DeploymentStatus, DeploymentType, SecretReference, SourceConfig, SourceRevisionConfig } from "./schemas.ts";

/** SQL for deployments. Every statement names the workspace: another workspace's row is a missing row. */

/** The deployment's own settings; what makes a revision (resource_spec, secrets, ...) lives on revisions. */
export type StoredSourceConfig = Omit<SourceConfig, "resource_spec">;

export interface DeploymentRow {
  id: string;
  workspace_id: string;
  name: string;
  source: DeploymentSource;
  source_config: StoredSourceConfig;
  status: DeploymentStatus;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** Slipway's sleep setting (null: the control plane's default) and state (docs/decisions/0039). */
  sleep_after_minutes: number | null;
  sleeping_since: Date | string | null;
}

/** A deployment with what its record shows of the latest revision. */
export interface DeploymentView extends DeploymentRow {
  source_revision_config: SourceRevisionConfig | null;
  resource_spec: ResourceSpec | null;
  secret_names: string[] | null;
  secret_references: SecretReference[] | null;
}

const VIEW = `SELECT d.id, d.workspace_id, d.name, d.source, d.source_config, d.status, d.latest_revision_id,
    d.active_revision_id, d.image_version, d.created_at, d.updated_at, d.sleep_after_minutes, d.sleeping_since,
    r.source_revision_config, r.resource_spec, r.secret_names, r.secret_references
  FROM deployments d LEFT JOIN revisions r ON r.id = d.latest_revision_id`;

/** Inserts a deployment; false when the workspace already has one of that name. */
export async function insertDeployment(
  q: Queryable,
  d: {
    id: string;
    workspaceId: string;
    name: string;
    source: DeploymentSource;
    sourceConfig: StoredSourceConfig;
    status: DeploymentStatus;
    sleepAfterMinutes?: number | null;
    now: string;
  },
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO deployments (id, workspace_id, name, source, source_config, status, sleep_after_minutes, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $8)
     ON CONFLICT (workspace_id, name) WHERE status <> 'AWAITING_DELETE' DO NOTHING RETURNING id`,
    [d.id, d.workspaceId, d.name, d.source, JSON.stringify(d.sourceConfig), d.status, d.sleepAfterMinutes ?? null, d.now],
  );
  return rows.length === 1;
}

/**
 * The deployments a workspace holds (those being deleted aside), counted under a lock held
 * to the end of the transaction: two creations in one workspace count one after the other,
 * so together they cannot pass its quota.
 */
export async function countDeploymentsLocked(q: Queryable, workspaceId: string): Promise<number> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`slipway-deployment-quota:${workspaceId}`]);
  const rows = await q.query<{ count: number }>("SELECT count(*)::int AS count FROM deployments WHERE workspace_id = $1 AND status <> 'AWAITING_DELETE'", [
    workspaceId,
  ]);
  return rows[0].count;
}

export async function getDeploymentView(q: Queryable, workspaceId: string, id: string): Promise<DeploymentView | undefined> {
  const rows = await q.query<DeploymentView>(`${VIEW} WHERE d.workspace_id = $1 AND d.id = $2`, [workspaceId, id]);
  return rows[0];
}

const ROW = `SELECT id, workspace_id, name, source, source_config, status, latest_revision_id, active_revision_id,
    image_version, created_at, updated_at, sleep_after_minutes, sleeping_since FROM deployments`;

export async function findDeployment(q: Queryable, workspaceId: string, id: string): Promise<DeploymentRow | undefined> {
  const rows = await q.query<DeploymentRow>(`${ROW} WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0];
}

/**
 * Locks the deployment row for the rest of the transaction. Every change to a deployment's
 * revisions takes this lock first, so two patches (or a patch and the pipeline) decide the
 * queue rule one after the other instead of both seeing "nothing in flight".
 */
export async function lockDeployment(q: Queryable, workspaceId: string, id: string): Promise<DeploymentRow | undefined> {
  const rows = await q.query<DeploymentRow>(`${ROW} WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [workspaceId, id]);
  return rows[0];
}

export interface DeploymentFilter {
  nameContains?: string;
  status?: DeploymentStatus;
  deploymentType?: DeploymentType;
  ids?: string[];
  imageVersion?: string;
  /** true: deployments driven by a listener; false: the others. */
  remote?: boolean;
  limit: number;
  offset: number;
}

export async function listDeploymentViews(q: Queryable, workspaceId: string, f: DeploymentFilter): Promise<DeploymentView[]> {
  // Each filter is "parameter is null or it matches", so one statement serves every combination.
  return q.query<DeploymentView>(
    `${VIEW}
      WHERE d.workspace_id = $1
        AND ($2::text IS NULL OR d.name ILIKE '%' || $2 || '%' ESCAPE '\\')
        AND ($3::text IS NULL OR d.status = $3)
        AND ($4::text IS NULL OR d.source_config->>'deployment_type' = $4)
        AND ($5::uuid[] IS NULL OR d.id = ANY($5::uuid[]))
        AND ($6::text IS NULL OR d.image_version = $6)
        AND ($7::boolean IS NULL OR (d.source_config->>'listener_id' IS NOT NULL) = $7)
      ORDER BY d.seq DESC LIMIT $8 OFFSET $9`,
    [
      workspaceId,
      f.nameContains === undefined ? null : escapeLike(f.nameContains),
      f.status ?? null,
      f.deploymentType ?? null,
      f.ids ?? null,
      f.imageVersion ?? null,
      f.remote ?? null,
      f.limit,
      f.offset,
    ],
  );
}

export async function updateDeployment(
  q: Queryable,
  workspaceId: string,
  id: string,
  change: { sourceConfig?: StoredSourceConfig; latestRevisionId?: string; activeRevisionId?: string | null; sleepAfterMinutes?: number | null; now: string },
): Promise<void> {
  await q.query(
    `UPDATE deployments SET
        source_config = COALESCE($3::jsonb, source_config),
        latest_revision_id = COALESCE($4::uuid, latest_revision_id),
        active_revision_id = CASE WHEN $5::boolean THEN $6::uuid ELSE active_revision_id END,
        sleep_after_minutes = CASE WHEN $8::boolean THEN $9::integer ELSE sleep_after_minutes END,
        updated_at = $7
      WHERE workspace_id = $1 AND id = $2`,
    [
      workspaceId,
      id,
      change.sourceConfig === undefined ? null : JSON.stringify(change.sourceConfig),
      change.latestRevisionId ?? null,
      change.activeRevisionId !== undefined,
      change.activeRevisionId ?? null,
      change.now,
      change.sleepAfterMinutes !== undefined,
      change.sleepAfterMinutes ?? null,
    ],
  );
}

/**
 * The deployment's status from its revisions: READY while a revision serves,
 * AWAITING_DATABASE while its first revision is on its way, UNUSED when nothing serves
 * and nothing is coming (its revisions failed, or an upload is awaited). AWAITING_DELETE
 * stays until the delete is done.
 */
export async function refreshDeploymentStatus(q: Queryable, workspaceId: string, id: string, now: string): Promise<void> {
  await q.query(
    `UPDATE deployments d SET status = next.status, updated_at = $3
       FROM (SELECT CASE
               WHEN d2.status = 'AWAITING_DELETE' THEN 'AWAITING_DELETE'
               WHEN d2.active_revision_id IS NOT NULL THEN 'READY'
               WHEN EXISTS (SELECT 1 FROM revisions r WHERE r.deployment_id = d2.id AND r.status = ANY($4::text[])
                            -- a revision waiting for an upload is not on its way
                            AND (r.not_before IS NULL OR r.not_before < '9999-01-01')) THEN 'AWAITING_DATABASE'
               ELSE 'UNUSED' END AS status
             FROM deployments d2 WHERE d2.workspace_id = $1 AND d2.id = $2) next
      WHERE d.workspace_id = $1 AND d.id = $2 AND d.status <> next.status`,
    [workspaceId, id, now, ["QUEUED", ...IN_FLIGHT]],
  );
}

/**
 * Marks the given deployments AWAITING_DELETE (the pipeline stops their processes, drops
 * their data and then the rows). Returns the ids that existed. The caller interrupts their
 * revisions (through the revisions' state machine) and announces DELETE_CHANNEL.
 */
export async function markForDeletion(q: Queryable, workspaceId: string, ids: readonly string[], now: string): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `UPDATE deployments SET status = 'AWAITING_DELETE', updated_at = $3
      WHERE workspace_id = $1 AND id = ANY($2::uuid[]) RETURNING id`,
    [workspaceId, ids, now],
  );
  return rows.map((r) => r.id);
}

/** Channel on which a deployment marked for deletion is announced to the pipeline. */
export const DELETE_CHANNEL = "slipway_deployment_delete";

/** Wakes the pipeline's deleter (delivered when the caller's transaction commits). */
export async function announceDeletion(q: Queryable, ids: readonly string[]): Promise<void> {
  await q.query("SELECT pg_notify($1, $2)", [DELETE_CHANNEL, ids.join(",")]);
}

/** Deployments whose deletion is pending (the pipeline finishes them, also after a restart). */
export async function deploymentsAwaitingDelete(q: Queryable): Promise<{ id: string; workspace_id: string }[]> {
  return q.query("SELECT id, workspace_id FROM deployments WHERE status = 'AWAITING_DELETE' ORDER BY seq");
}

/** The last step of a deletion: the row (revisions, builds, uploads and logs cascade). */
export async function deleteDeploymentRow(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM deployments WHERE id = $1 AND status = 'AWAITING_DELETE'", [id]);
}

export async function countDeploymentsOfListener(q: Queryable, workspaceId: string, listenerId: string): Promise<number> {
  const rows = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE workspace_id = $1 AND source_config->>'listener_id' = $2`, [
    workspaceId,
    listenerId,
  ]);
  return rows[0]?.n ?? 0;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
