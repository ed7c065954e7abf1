-- Sessions of the MCP endpoint (Mcp-Session-Id). They hold nothing a tool call needs,
-- but a client that ended its session (DELETE /mcp) must get 404 with it afterwards, in
-- every process of the deployment: so they live in the database, not in one process.
CREATE TABLE mcp_sessions (
  session_id uuid PRIMARY KEY,
  protocol_version text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_sessions_last_used ON mcp_sessions (last_used_at);
