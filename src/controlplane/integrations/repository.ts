import type { Queryable } from "../../storage/database.ts";

/** SQL for integrations. Every statement filters on workspace_id. */

export interface IntegrationRow {
  id: string;
  workspace_id: string;
  installation_id: number;
  provider: "github" | "git";
  name: string;
  base_url: string;
  token_sealed: string | null;
  webhook_secret_sealed: string | null;
  created_at: Date;
}

const COLUMNS = "id, workspace_id, installation_id, provider, name, base_url, token_sealed, webhook_secret_sealed, created_at";

export async function listIntegrations(q: Queryable, workspaceId: string): Promise<IntegrationRow[]> {
  return q.query<IntegrationRow>(`SELECT ${COLUMNS} FROM integrations WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId]);
}

export async function findIntegration(q: Queryable, workspaceId: string, id: string): Promise<IntegrationRow | undefined> {
  const rows = await q.query<IntegrationRow>(`SELECT ${COLUMNS} FROM integrations WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0];
}

export async function findIntegrationByName(q: Queryable, workspaceId: string, name: string): Promise<IntegrationRow | undefined> {
  const rows = await q.query<IntegrationRow>(`SELECT ${COLUMNS} FROM integrations WHERE workspace_id = $1 AND name = $2`, [workspaceId, name]);
  return rows[0];
}

export async function insertIntegration(q: Queryable, row: Omit<IntegrationRow, "installation_id" | "created_at"> & { now: Date }): Promise<IntegrationRow> {
  const rows = await q.query<IntegrationRow>(
    `INSERT INTO integrations (id, workspace_id, provider, name, base_url, token_sealed, webhook_secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     RETURNING ${COLUMNS}`,
    [row.id, row.workspace_id, row.provider, row.name, row.base_url, row.token_sealed, row.webhook_secret_sealed, row.now],
  );
  return rows[0];
}

export async function deleteIntegration(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const rows = await q.query("DELETE FROM integrations WHERE workspace_id = $1 AND id = $2 RETURNING id", [workspaceId, id]);
  return rows.length > 0;
}
