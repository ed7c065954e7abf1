import type { Queryable } from "../../storage/database.ts";
import type { ResourceSpec } from "./resource-spec.ts";
import type {
  DeploymentSource,
  DeploymentStatus,
  DeploymentType,
  SecretReference,
  SourceConfig,
  SourceRevisionConfig,
} from "./schemas.ts";

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
}

/** A deployment with what its record shows of the latest revision. */
export interface DeploymentView extends DeploymentRow {
  source_revision_config: SourceRevisionConfig | null;
  resource_spec: ResourceSpec | null;
  secret_names: string[] | null;
  secret_references: SecretReference[] | null;
}

const VIEW = `SELECT d.id, d.workspace_id, d.name, d.source, d.source_config, d.status, d.latest_revision_id,
    d.active_revision_id, d.image_version, d.created_at, d.updated_at,
    r.source_revision_config, r.resource_spec, r.secret_names, r.secret_references
  FROM deployments d LEFT JOIN revisions r ON r.id = d.latest_revision_id`;

/** Inserts a deployment; false when the workspace already has one of that name. */
export async function insertDeployment(
  q: Queryable,
  d: { id: string; workspaceId: string; name: string; source: DeploymentSource; sourceConfig: StoredSourceConfig; status: DeploymentStatus; now: string },
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO deployments (id, workspace_id, name, source, source_config, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $7)
     ON CONFLICT (workspace_id, name) DO NOTHING RETURNING id`,
    [d.id, d.workspaceId, d.name, d.source, JSON.stringify(d.sourceConfig), d.status, d.now],
  );
  return rows.length === 1;
}

export async function getDeploymentView(q: Queryable, workspaceId: string, id: string): Promise<DeploymentView | undefined> {
  const rows = await q.query<DeploymentView>(`${VIEW} WHERE d.workspace_id = $1 AND d.id = $2`, [workspaceId, id]);
  return rows[0];
}

const ROW = `SELECT id, workspace_id, name, source, source_config, status, latest_revision_id, active_revision_id,
    image_version, created_at, updated_at FROM deployments`;

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
  change: { sourceConfig?: StoredSourceConfig; latestRevisionId?: string; activeRevisionId?: string | null; now: string },
): Promise<void> {
  await q.query(
    `UPDATE deployments SET
        source_config = COALESCE($3::jsonb, source_config),
        latest_revision_id = COALESCE($4::uuid, latest_revision_id),
        active_revision_id = CASE WHEN $5::boolean THEN $6::uuid ELSE active_revision_id END,
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
    ],
  );
}

/** Deletes the given deployments (revisions cascade); returns the ids that existed. */
export async function deleteDeployments(q: Queryable, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `DELETE FROM deployments WHERE workspace_id = $1 AND id = ANY($2::uuid[]) RETURNING id`,
    [workspaceId, ids],
  );
  return rows.map((r) => r.id);
}

export async function countDeploymentsOfListener(q: Queryable, workspaceId: string, listenerId: string): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM deployments WHERE workspace_id = $1 AND source_config->>'listener_id' = $2`,
    [workspaceId, listenerId],
  );
  return rows[0]?.n ?? 0;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
