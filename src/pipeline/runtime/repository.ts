import type { Queryable } from "../../storage/database.ts";

/** SQL for what the runtime serves. */

export interface ServedRevision {
  deployment_id: string;
  workspace_id: string;
  revision_id: string;
  build_key: string | null;
  /** Set for image sources. */
  image_uri: string | null;
  resource_spec: Record<string, unknown> | null;
  secrets_sealed: Record<string, string>;
}

const SERVED = `SELECT d.id AS deployment_id, d.workspace_id, r.id AS revision_id, r.build_key,
            CASE WHEN r.source IN ('external_docker', 'internal_docker') THEN r.source_revision_config->>'image_uri' END AS image_uri,
            r.resource_spec, r.secrets_sealed
       FROM deployments d JOIN revisions r ON r.id = d.active_revision_id
      WHERE d.status <> 'AWAITING_DELETE'`;

/** The active revision of every deployment not being deleted nor asleep: what a start serves again. */
export async function activeRevisions(q: Queryable): Promise<ServedRevision[]> {
  return q.query<ServedRevision>(`${SERVED} AND d.sleeping_since IS NULL ORDER BY d.seq`);
}

/** The active revision of one deployment, unless it is being deleted: what a wake serves again. */
export async function activeRevisionOf(q: Queryable, deploymentId: string): Promise<ServedRevision | undefined> {
  return (await q.query<ServedRevision>(`${SERVED} AND d.id = $1`, [deploymentId]))[0];
}

/** The sealed password of a deployment's PostgreSQL role, created on first use (the first writer wins). */
export interface StoredRole {
  /** The role its processes log in as. */
  role: string;
  password_sealed: string;
  generation: number;
}

export async function deploymentRole(q: Queryable, row: { deploymentId: string; role: string; passwordSealed: string; now: Date }): Promise<StoredRole> {
  await q.query(
    `INSERT INTO deployment_roles (deployment_id, role, password_sealed, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (deployment_id) DO NOTHING`,
    [row.deploymentId, row.role, row.passwordSealed, row.now],
  );
  const rows = await q.query<StoredRole>("SELECT role, password_sealed, generation FROM deployment_roles WHERE deployment_id = $1", [row.deploymentId]);
  return rows[0];
}

/**
 * The next generation of a deployment's credential; only from the one it read (two
 * rotations at once: the second gets the first's), so that no password is lost.
 */
export async function rotateDeploymentRole(
  q: Queryable,
  row: { deploymentId: string; role: string; passwordSealed: string; generation: number },
): Promise<StoredRole> {
  await q.query("UPDATE deployment_roles SET role = $2, password_sealed = $3, generation = $4 WHERE deployment_id = $1 AND generation = $4 - 1", [
    row.deploymentId,
    row.role,
    row.passwordSealed,
    row.generation,
  ]);
  const rows = await q.query<StoredRole>("SELECT role, password_sealed, generation FROM deployment_roles WHERE deployment_id = $1", [row.deploymentId]);
  return rows[0];
}

/** The role a deployment's processes log in as now, if it has one. */
export async function deploymentLoginRole(q: Queryable, deploymentId: string): Promise<string | undefined> {
  const rows = await q.query<{ role: string }>("SELECT role FROM deployment_roles WHERE deployment_id = $1", [deploymentId]);
  return rows[0]?.role;
}
