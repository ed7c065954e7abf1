import type { Queryable } from "../../storage/database.ts";
import type { ListenerComputeConfig } from "./schemas.ts";

/** SQL for listeners. Every statement names the workspace: another workspace's row is a missing row. */

export interface ListenerRow {
  id: string;
  version: string | null;
  compute_type: "k8s";
  compute_id: string;
  compute_config: ListenerComputeConfig;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = "id, version, compute_type, compute_id, compute_config, created_at, updated_at";

/** Inserts a listener; false when the workspace already has one for that compute_id. */
export async function insertListener(
  q: Queryable,
  l: { id: string; workspaceId: string; version: string | null; computeId: string; computeConfig: ListenerComputeConfig; now: string },
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO listeners (id, workspace_id, version, compute_type, compute_id, compute_config, created_at, updated_at)
     VALUES ($1, $2, $3, 'k8s', $4, $5::jsonb, $6, $6)
     ON CONFLICT (workspace_id, compute_id) DO NOTHING RETURNING id`,
    [l.id, l.workspaceId, l.version, l.computeId, JSON.stringify(l.computeConfig), l.now],
  );
  return rows.length === 1;
}

export async function getListener(q: Queryable, workspaceId: string, id: string): Promise<ListenerRow | undefined> {
  const rows = await q.query<ListenerRow>(`SELECT ${COLUMNS} FROM listeners WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0];
}

export async function listListeners(q: Queryable, workspaceId: string, page: { limit: number; offset: number }): Promise<ListenerRow[]> {
  return q.query<ListenerRow>(`SELECT ${COLUMNS} FROM listeners WHERE workspace_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`, [
    workspaceId,
    page.limit,
    page.offset,
  ]);
}

/** Applies the given changes (undefined = unchanged); returns the updated row, or undefined if there is none. */
export async function updateListener(
  q: Queryable,
  workspaceId: string,
  id: string,
  change: { version?: string; computeConfig?: ListenerComputeConfig; now: string },
): Promise<ListenerRow | undefined> {
  const rows = await q.query<ListenerRow>(
    `UPDATE listeners SET version = COALESCE($3, version), compute_config = COALESCE($4::jsonb, compute_config), updated_at = $5
      WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [workspaceId, id, change.version ?? null, change.computeConfig ? JSON.stringify(change.computeConfig) : null, change.now],
  );
  return rows[0];
}

export async function deleteListener(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const rows = await q.query(`DELETE FROM listeners WHERE workspace_id = $1 AND id = $2 RETURNING id`, [workspaceId, id]);
  return rows.length === 1;
}
