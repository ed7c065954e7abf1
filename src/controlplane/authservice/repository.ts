import type { Queryable } from "../../storage/database.ts";

/** SQL for OAuth providers. Every statement filters on workspace_id. */

export interface ProviderRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  provider_id: string;
  name: string;
  client_id: string;
  client_secret_sealed: string | null;
  auth_url: string;
  token_url: string;
  uses_pkce: boolean;
  code_challenge_method: string | null;
  provider_type: string | null;
  token_endpoint_auth_method: string;
  mcp_server_url: string | null;
  is_dynamic_client: boolean;
  /** RFC 7009 revocation endpoint, when discovery named one. */
  revocation_url: string | null;
  /** RFC 8707 resource (an MCP server's URL) sent with authorization and token requests. */
  resource: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, organization_id, workspace_id, provider_id, name, client_id, client_secret_sealed, auth_url, token_url,
  uses_pkce, code_challenge_method, provider_type, token_endpoint_auth_method, mcp_server_url, is_dynamic_client,
  revocation_url, resource, created_at, updated_at`;

export async function listProviders(q: Queryable, workspaceId: string): Promise<ProviderRow[]> {
  return q.query<ProviderRow>(`SELECT ${COLUMNS} FROM oauth_providers WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId]);
}

/** By `provider_id`, or by `id` when the reference is a uuid. */
export async function findProvider(q: Queryable, workspaceId: string, reference: string, byId: boolean): Promise<ProviderRow | undefined> {
  const rows = byId
    ? await q.query<ProviderRow>(
        `SELECT ${COLUMNS} FROM oauth_providers WHERE workspace_id = $1 AND (provider_id = $2 OR id = $2::uuid)
          ORDER BY (provider_id = $2) DESC LIMIT 1`,
        [workspaceId, reference],
      )
    : await q.query<ProviderRow>(`SELECT ${COLUMNS} FROM oauth_providers WHERE workspace_id = $1 AND provider_id = $2`, [workspaceId, reference]);
  return rows[0];
}

export async function insertProvider(q: Queryable, row: ProviderRow): Promise<ProviderRow> {
  const rows = await q.query<ProviderRow>(
    `INSERT INTO oauth_providers (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     RETURNING ${COLUMNS}`,
    [
      row.id,
      row.organization_id,
      row.workspace_id,
      row.provider_id,
      row.name,
      row.client_id,
      row.client_secret_sealed,
      row.auth_url,
      row.token_url,
      row.uses_pkce,
      row.code_challenge_method,
      row.provider_type,
      row.token_endpoint_auth_method,
      row.mcp_server_url,
      row.is_dynamic_client,
      row.revocation_url,
      row.resource,
      row.created_at,
      row.updated_at,
    ],
  );
  return rows[0];
}

export async function updateProvider(q: Queryable, row: ProviderRow): Promise<ProviderRow> {
  const rows = await q.query<ProviderRow>(
    `UPDATE oauth_providers
        SET name = $3, client_id = $4, client_secret_sealed = $5, auth_url = $6, token_url = $7,
            uses_pkce = $8, code_challenge_method = $9, updated_at = $10
      WHERE workspace_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [
      row.workspace_id,
      row.id,
      row.name,
      row.client_id,
      row.client_secret_sealed,
      row.auth_url,
      row.token_url,
      row.uses_pkce,
      row.code_challenge_method,
      row.updated_at,
    ],
  );
  return rows[0];
}

export async function deleteProvider(q: Queryable, workspaceId: string, id: string): Promise<void> {
  await q.query("DELETE FROM oauth_providers WHERE workspace_id = $1 AND id = $2", [workspaceId, id]);
}

/** A provider by its row id (flows keep the id, so a renamed provider_id does not break them). */
export async function findProviderById(q: Queryable, id: string): Promise<ProviderRow | undefined> {
  return (await q.query<ProviderRow>(`SELECT ${COLUMNS} FROM oauth_providers WHERE id = $1`, [id]))[0];
}
