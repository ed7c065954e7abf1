import type { Queryable } from "../../storage/database.ts";
import type { RevisionBuild } from "./retention.ts";

/** SQL for builds: what a revision built, so that later revisions of the same source reuse it. */

export interface BuildRow {
  key: string;
  deployment_id: string;
  source_id: string;
  recipe: string;
  directory: string;
  config_file: string;
  revision_id: string;
  /** The install layer its node_modules came from or was saved as (package cache, installs/<key>). */
  install_layer?: string | null;
}

const COLUMNS = "key, deployment_id, source_id, recipe, directory, config_file, revision_id, install_layer";

export async function findBuild(q: Queryable, deploymentId: string, sourceId: string, recipe: string): Promise<BuildRow | undefined> {
  const rows = await q.query<BuildRow>(
    `SELECT ${COLUMNS} FROM builds WHERE deployment_id = $1 AND source_id = $2 AND recipe = $3 ORDER BY created_at DESC LIMIT 1`,
    [deploymentId, sourceId, recipe],
  );
  return rows[0];
}

export async function getBuild(q: Queryable, key: string): Promise<BuildRow | undefined> {
  const rows = await q.query<BuildRow>(`SELECT ${COLUMNS} FROM builds WHERE key = $1`, [key]);
  return rows[0];
}

export async function saveBuild(q: Queryable, row: BuildRow & { workspace_id: string; now: Date }): Promise<void> {
  await q.query(
    `INSERT INTO builds (key, workspace_id, deployment_id, source_id, recipe, directory, config_file, revision_id, created_at, install_layer)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (key) DO UPDATE SET directory = EXCLUDED.directory, config_file = EXCLUDED.config_file, install_layer = EXCLUDED.install_layer`,
    [
      row.key,
      row.workspace_id,
      row.deployment_id,
      row.source_id,
      row.recipe,
      row.directory,
      row.config_file,
      row.revision_id,
      row.now.toISOString(),
      row.install_layer ?? null,
    ],
  );
}

/** Every build directory of a deployment (its delete removes them). */
export async function buildDirectories(q: Queryable, deploymentId: string): Promise<string[]> {
  const rows = await q.query<{ directory: string }>("SELECT directory FROM builds WHERE deployment_id = $1", [deploymentId]);
  return rows.map((r) => r.directory);
}

/**
 * Locks the deployment's row (what starting a revision locks too: no revision of it starts
 * while its builds are pruned) and says which build its active revision runs; undefined
 * when the deployment is gone.
 */
export async function lockForPruning(q: Queryable, deploymentId: string): Promise<{ active_build_key: string | null } | undefined> {
  const rows = await q.query<{ active_build_key: string | null }>(
    `SELECT (SELECT r.build_key FROM revisions r WHERE r.id = d.active_revision_id) AS active_build_key
       FROM deployments d WHERE d.id = $1 FOR UPDATE`,
    [deploymentId],
  );
  return rows[0];
}

/** Every revision of a deployment with its status and build, for the retention rule. */
export async function revisionBuilds(q: Queryable, deploymentId: string): Promise<RevisionBuild[]> {
  const rows = await q.query<RevisionBuild & { seq: string | number }>("SELECT seq, status, build_key FROM revisions WHERE deployment_id = $1", [deploymentId]);
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/** Deletes the deployment's builds other than `keep`; returns their directories. */
export async function deleteBuildsExcept(q: Queryable, deploymentId: string, keep: readonly string[]): Promise<string[]> {
  const rows = await q.query<{ directory: string }>("DELETE FROM builds WHERE deployment_id = $1 AND NOT (key = ANY($2::text[])) RETURNING directory", [
    deploymentId,
    keep,
  ]);
  return rows.map((r) => r.directory);
}

/** What the builds using a package cache take from it (one deployment's, or all when null). */
export async function cacheUsers(q: Queryable, deploymentId: string | null): Promise<Pick<BuildRow, "install_layer" | "config_file">[]> {
  return q.query("SELECT install_layer, config_file FROM builds WHERE $1::uuid IS NULL OR deployment_id = $1", [deploymentId]);
}

/** Deployment ids, for the pruning at start, and to know when the last one is gone. */
export async function deploymentIds(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ id: string }>("SELECT id FROM deployments");
  return rows.map((r) => r.id);
}
