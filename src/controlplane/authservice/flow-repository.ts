import type { Queryable } from "../../storage/database.ts";

/** SQL for OAuth flows under way and the tokens they produce. Every statement filters on workspace_id, except the callback's claim by state. */

export type AuthRequestStatus = "pending" | "exchanging" | "completed" | "failed";

export interface AuthRequestRow {
  id: string;
  workspace_id: string;
  provider_ref: string;
  provider_id: string;
  state_hash: string;
  code_verifier_sealed: string | null;
  redirect_uri: string;
  scopes: string[];
  user_id: string;
  ls_user_id: string | null;
  agent_id: string | null;
  requested_by: string;
  replaces_token_id: string | null;
  is_default: boolean;
  status: AuthRequestStatus;
  error: string | null;
  token_id: string | null;
  created_at: Date;
  expires_at: Date;
  finished_at: Date | null;
}

export interface TokenRow {
  id: string;
  workspace_id: string;
  provider_ref: string;
  user_id: string;
  ls_user_id: string | null;
  agent_id: string | null;
  scopes: string[];
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  token_type: string;
  expires_at: Date | null;
  provider_account_label: string | null;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A token with its provider's public `provider_id`. */
export type TokenWithProvider = TokenRow & { provider_id: string };

const REQUEST_COLUMNS = `id, workspace_id, provider_ref, provider_id, state_hash, code_verifier_sealed, redirect_uri, scopes, user_id,
  ls_user_id, agent_id, requested_by, replaces_token_id, is_default, status, error, token_id, created_at, expires_at, finished_at`;
const TOKEN_COLUMNS = `t.id, t.workspace_id, t.provider_ref, t.user_id, t.ls_user_id, t.agent_id, t.scopes, t.access_token_sealed,
  t.refresh_token_sealed, t.token_type, t.expires_at, t.provider_account_label, t.is_default, t.created_at, t.updated_at, p.provider_id`;
const TOKENS = "oauth_tokens t JOIN oauth_providers p ON p.id = t.provider_ref";

export async function insertAuthRequest(q: Queryable, r: Omit<AuthRequestRow, "status" | "error" | "token_id" | "finished_at">): Promise<void> {
  await q.query(
    `INSERT INTO oauth_auth_requests (id, workspace_id, provider_ref, provider_id, state_hash, code_verifier_sealed, redirect_uri, scopes,
       user_id, ls_user_id, agent_id, requested_by, replaces_token_id, is_default, status, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, 'pending', $15, $16)`,
    [
      r.id,
      r.workspace_id,
      r.provider_ref,
      r.provider_id,
      r.state_hash,
      r.code_verifier_sealed,
      r.redirect_uri,
      JSON.stringify(r.scopes),
      r.user_id,
      r.ls_user_id,
      r.agent_id,
      r.requested_by,
      r.replaces_token_id,
      r.is_default,
      r.created_at,
      r.expires_at,
    ],
  );
}

/**
 * Takes a pending flow by its state for one callback: the row moves to `exchanging` in
 * the same statement, so a second callback with the same state finds nothing. A flow of
 * another provider, of another workspace (when one is given) or past its expiry is left as it is.
 */
export async function claimAuthRequest(
  q: Queryable,
  where: { stateHash: string; providerId: string; workspaceId?: string; now: Date },
): Promise<AuthRequestRow | undefined> {
  const rows = await q.query<AuthRequestRow>(
    `UPDATE oauth_auth_requests SET status = 'exchanging'
      WHERE state_hash = $1 AND status = 'pending' AND provider_id = $2 AND expires_at > $3
        AND ($4::uuid IS NULL OR workspace_id = $4::uuid)
      RETURNING ${REQUEST_COLUMNS}`,
    [where.stateHash, where.providerId, where.now, where.workspaceId ?? null],
  );
  return rows[0];
}

export async function finishAuthRequest(
  q: Queryable,
  id: string,
  outcome: { status: "completed" | "failed"; tokenId?: string; error?: string; now: Date },
): Promise<void> {
  await q.query(`UPDATE oauth_auth_requests SET status = $2, token_id = $3, error = $4, finished_at = $5, code_verifier_sealed = NULL WHERE id = $1`, [
    id,
    outcome.status,
    outcome.tokenId ?? null,
    outcome.error ?? null,
    outcome.now,
  ]);
}

export async function findAuthRequest(q: Queryable, workspaceId: string, id: string): Promise<AuthRequestRow | undefined> {
  const rows = await q.query<AuthRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM oauth_auth_requests WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0];
}

export async function insertToken(q: Queryable, t: TokenRow): Promise<void> {
  await q.query(
    `INSERT INTO oauth_tokens (id, workspace_id, provider_ref, user_id, ls_user_id, agent_id, scopes, access_token_sealed, refresh_token_sealed,
       token_type, expires_at, provider_account_label, is_default, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      t.id,
      t.workspace_id,
      t.provider_ref,
      t.user_id,
      t.ls_user_id,
      t.agent_id,
      JSON.stringify(t.scopes),
      t.access_token_sealed,
      t.refresh_token_sealed,
      t.token_type,
      t.expires_at,
      t.provider_account_label,
      t.is_default,
      t.created_at,
      t.updated_at,
    ],
  );
}

/**
 * New secrets for a token (a refresh, or a repeated flow). `expectedUpdatedAt` makes it a
 * compare-and-set: false when someone else changed the token since it was read.
 */
export async function replaceTokenSecrets(
  q: Queryable,
  t: Pick<TokenRow, "id" | "workspace_id" | "scopes" | "access_token_sealed" | "refresh_token_sealed" | "token_type" | "expires_at" | "updated_at">,
  expectedUpdatedAt?: Date,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE oauth_tokens SET scopes = $3::jsonb, access_token_sealed = $4, refresh_token_sealed = $5, token_type = $6, expires_at = $7, updated_at = $8
      WHERE workspace_id = $1 AND id = $2 AND ($9::timestamptz IS NULL OR updated_at = $9::timestamptz)
      RETURNING id`,
    [
      t.workspace_id,
      t.id,
      JSON.stringify(t.scopes),
      t.access_token_sealed,
      t.refresh_token_sealed,
      t.token_type,
      t.expires_at,
      t.updated_at,
      expectedUpdatedAt ?? null,
    ],
  );
  return rows.length === 1;
}

/** Only one default token per user and provider. */
export async function clearDefault(q: Queryable, workspaceId: string, userId: string, providerRef: string, keepId: string): Promise<void> {
  await q.query("UPDATE oauth_tokens SET is_default = false WHERE workspace_id = $1 AND user_id = $2 AND provider_ref = $3 AND id <> $4 AND is_default", [
    workspaceId,
    userId,
    providerRef,
    keepId,
  ]);
}

/** A user's tokens for a provider, default first, then newest. */
export async function ownerTokens(q: Queryable, workspaceId: string, userId: string, providerRef: string): Promise<TokenWithProvider[]> {
  return q.query<TokenWithProvider>(
    `SELECT ${TOKEN_COLUMNS} FROM ${TOKENS} WHERE t.workspace_id = $1 AND t.user_id = $2 AND t.provider_ref = $3
      ORDER BY t.is_default DESC, t.updated_at DESC, t.id`,
    [workspaceId, userId, providerRef],
  );
}

/** The tokens a caller owns: those for its id, or obtained for it as its LangSmith user. */
export async function callerTokens(q: Queryable, workspaceId: string, caller: string, providerId?: string): Promise<TokenWithProvider[]> {
  return q.query<TokenWithProvider>(
    `SELECT ${TOKEN_COLUMNS} FROM ${TOKENS}
      WHERE t.workspace_id = $1 AND (t.user_id = $2 OR t.ls_user_id = $2) AND ($3::text IS NULL OR p.provider_id = $3::text)
      ORDER BY t.created_at, t.id`,
    [workspaceId, caller, providerId ?? null],
  );
}

export async function findToken(q: Queryable, workspaceId: string, id: string): Promise<TokenWithProvider | undefined> {
  return (await q.query<TokenWithProvider>(`SELECT ${TOKEN_COLUMNS} FROM ${TOKENS} WHERE t.workspace_id = $1 AND t.id = $2`, [workspaceId, id]))[0];
}

export async function deleteToken(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return (await q.query("DELETE FROM oauth_tokens WHERE workspace_id = $1 AND id = $2 RETURNING id", [workspaceId, id])).length === 1;
}

export async function updateTokenMetadata(
  q: Queryable,
  workspaceId: string,
  id: string,
  patch: { label?: string | null; isDefault?: boolean; now: Date },
): Promise<void> {
  await q.query(
    `UPDATE oauth_tokens SET provider_account_label = CASE WHEN $3 THEN $4 ELSE provider_account_label END,
        is_default = COALESCE($5, is_default), updated_at = $6
      WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, patch.label !== undefined, patch.label ?? null, patch.isDefault ?? null, patch.now],
  );
}

/** Tokens of the workspace's Slack providers (`provider_type` slack). */
export async function slackTokens(q: Queryable, workspaceId: string): Promise<TokenWithProvider[]> {
  return q.query<TokenWithProvider>(
    `SELECT ${TOKEN_COLUMNS} FROM ${TOKENS} WHERE t.workspace_id = $1 AND p.provider_type = 'slack' ORDER BY t.created_at, t.id`,
    [workspaceId],
  );
}
