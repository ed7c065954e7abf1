-- The auth service's OAuth flows (docs/decisions/0043): flows under way, the tokens they
-- produce, and which agent may use which token. Access and refresh tokens, PKCE verifiers
-- and client secrets are sealed (AES-256-GCM, src/auth/secret-box.ts), each bound to its
-- row and field. A flow's `state` is stored only as its SHA-256.

-- Where a provider revokes tokens (RFC 7009), when its metadata names one (mcp-discover).
ALTER TABLE oauth_providers ADD COLUMN revocation_url text;
-- The RFC 8707 resource an MCP provider's tokens are for (the MCP server's canonical URL).
ALTER TABLE oauth_providers ADD COLUMN resource text;

-- user_id: whom the token is for (authenticate's user_id, else ls_user_id, else the caller).
-- agent_id: the agent it was obtained for, NULL for a user-level token.
CREATE TABLE oauth_tokens (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  provider_ref uuid NOT NULL REFERENCES oauth_providers (id) ON DELETE CASCADE,
  user_id text NOT NULL,
  ls_user_id text,
  agent_id text,
  scopes jsonb NOT NULL DEFAULT '[]',
  access_token_sealed text NOT NULL,
  refresh_token_sealed text,
  token_type text NOT NULL,
  expires_at timestamptz,
  provider_account_label text,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX oauth_tokens_owner ON oauth_tokens (workspace_id, user_id, provider_ref);
CREATE INDEX oauth_tokens_ls_user ON oauth_tokens (workspace_id, ls_user_id) WHERE ls_user_id IS NOT NULL;

-- One authorization-code flow. status: pending -> exchanging -> completed | failed.
-- A callback claims the row (pending -> exchanging) before it calls the provider, so a
-- state is used at most once.
CREATE TABLE oauth_auth_requests (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  provider_ref uuid NOT NULL REFERENCES oauth_providers (id) ON DELETE CASCADE,
  provider_id text NOT NULL,
  state_hash text NOT NULL UNIQUE,
  code_verifier_sealed text,
  redirect_uri text NOT NULL,
  scopes jsonb NOT NULL DEFAULT '[]',
  user_id text NOT NULL,
  ls_user_id text,
  agent_id text,
  requested_by text NOT NULL,
  replaces_token_id uuid,
  is_default boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'exchanging', 'completed', 'failed')),
  error text,
  token_id uuid REFERENCES oauth_tokens (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  finished_at timestamptz
);

-- Which agent may use which of a user's tokens.
CREATE TABLE oauth_agent_connections (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  oauth_token_id uuid NOT NULL REFERENCES oauth_tokens (id) ON DELETE CASCADE,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (workspace_id, agent_id, oauth_token_id)
);
