import type { Queryable } from "../../storage/database.ts";

/** Sessions unused this long are forgotten (a client coming back after that starts a new one). */
export const MCP_SESSION_IDLE_HOURS = 24;

export async function insertMcpSession(db: Queryable, sessionId: string, protocolVersion: string): Promise<void> {
  await db.query(`INSERT INTO mcp_sessions (session_id, protocol_version) VALUES ($1, $2)`, [sessionId, protocolVersion]);
}

/** Marks the session used; false when there is no such session (ended, forgotten, never issued). */
export async function touchMcpSession(db: Queryable, sessionId: string): Promise<boolean> {
  const rows = await db.query(`UPDATE mcp_sessions SET last_used_at = now() WHERE session_id = $1 RETURNING 1`, [sessionId]);
  return rows.length > 0;
}

export async function deleteMcpSession(db: Queryable, sessionId: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM mcp_sessions WHERE session_id = $1 RETURNING 1`, [sessionId]);
  return rows.length > 0;
}

export async function deleteIdleMcpSessions(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM mcp_sessions WHERE last_used_at < now() - make_interval(hours => $1)`, [MCP_SESSION_IDLE_HOURS]);
}
