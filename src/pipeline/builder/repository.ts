import type { Queryable } from "../../storage/database.ts";

/** SQL for builds: what a revision built, so that later revisions of the same source reuse it. */

export interface BuildRow {
  key: string;
  deployment_id: string;
  source_id: string;
  recipe: string;
  directory: string;
  config_file: string;
  revision_id: string;
}

const COLUMNS = "key, deployment_id, source_id, recipe, directory, config_file, revision_id";

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
    `INSERT INTO builds (key, workspace_id, deployment_id, source_id, recipe, directory, config_file, revision_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (key) DO UPDATE SET directory = EXCLUDED.directory, config_file = EXCLUDED.config_file`,
    [row.key, row.workspace_id, row.deployment_id, row.source_id, row.recipe, row.directory, row.config_file, row.revision_id, row.now.toISOString()],
  );
}

/** Every build directory of a deployment (its delete removes them). */
export async function buildDirectories(q: Queryable, deploymentId: string): Promise<string[]> {
  const rows = await q.query<{ directory: string }>("SELECT directory FROM builds WHERE deployment_id = $1", [deploymentId]);
  return rows.map((r) => r.directory);
}
