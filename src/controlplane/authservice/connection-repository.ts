import type { Queryable } from "../../storage/database.ts";

/** SQL for agent connections: which agent may use which OAuth token. Every statement filters on workspace_id. */

export interface ConnectionRow {
  id: string;
  workspace_id: string;
  agent_id: string;
  oauth_token_id: string;
  created_by: string;
  created_at: Date;
}

/** A connection with what its token says (provider, label, scopes, expiry), never the token. */
export type ConnectionView = ConnectionRow & {
  provider_id: string;
  provider_account_label: string | null;
  scopes: string[];
  expires_at: Date | null;
};

const VIEW = `SELECT c.id, c.workspace_id, c.agent_id, c.oauth_token_id, c.created_by, c.created_at,
    p.provider_id, t.provider_account_label, t.scopes, t.expires_at
  FROM oauth_agent_connections c
  JOIN oauth_tokens t ON t.id = c.oauth_token_id
  JOIN oauth_providers p ON p.id = t.provider_ref`;

export async function listConnections(q: Queryable, workspaceId: string, agentId: string): Promise<ConnectionView[]> {
  return q.query<ConnectionView>(`${VIEW} WHERE c.workspace_id = $1 AND c.agent_id = $2 ORDER BY c.created_at, c.id`, [workspaceId, agentId]);
}

export async function findConnection(q: Queryable, workspaceId: string, id: string): Promise<ConnectionView | undefined> {
  return (await q.query<ConnectionView>(`${VIEW} WHERE c.workspace_id = $1 AND c.id = $2`, [workspaceId, id]))[0];
}

/** Inserts unless the agent already has this token; undefined then. */
export async function insertConnection(q: Queryable, c: ConnectionRow): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO oauth_agent_connections (id, workspace_id, agent_id, oauth_token_id, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, agent_id, oauth_token_id) DO NOTHING RETURNING id`,
    [c.id, c.workspace_id, c.agent_id, c.oauth_token_id, c.created_by, c.created_at],
  );
  return rows.length === 1;
}

export async function deleteConnection(q: Queryable, workspaceId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await q.query("DELETE FROM oauth_agent_connections WHERE workspace_id = $1 AND agent_id = $2 AND id = $3 RETURNING id", [
    workspaceId,
    agentId,
    id,
  ]);
  return rows.length === 1;
}

/** The token ids an agent is connected to. */
export async function connectedTokenIds(q: Queryable, workspaceId: string, agentId: string): Promise<Set<string>> {
  const rows = await q.query<{ oauth_token_id: string }>("SELECT oauth_token_id FROM oauth_agent_connections WHERE workspace_id = $1 AND agent_id = $2", [
    workspaceId,
    agentId,
  ]);
  return new Set(rows.map((r) => r.oauth_token_id));
}
