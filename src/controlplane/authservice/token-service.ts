import { SlipwayError, conflict, notFound } from "../../http/errors.ts";
import type { AddressGuardPolicy } from "../../net/address-guard.ts";
import type { ControlPlaneDeps, TenantContext } from "../context.ts";
import { callerId } from "./caller.ts";
import * as connections from "./connection-repository.ts";
import * as flows from "./flow-repository.ts";
import type { AgentConnectionResponse, CreateAgentConnectionRequest, OAuthTokenSummary, OAuthTokenUpdateRequest, TokensRevoked } from "./flow-schemas.ts";
import * as providers from "./repository.ts";
import { revokeAtSlack } from "./slack-revoke.ts";
import { revokeToken } from "./token-endpoint.ts";
import { openTokenField, providerClient } from "./token-sealing.ts";

export type TokenDeps = Pick<ControlPlaneDeps, "db" | "secretsKey" | "now" | "newId">;

/**
 * A user's stored OAuth tokens and the agents connected to them. Only the token's owner
 * (the user it was obtained for) sees, relabels, deletes or connects it; a token is
 * revoked at its provider before it is deleted, and nothing is deleted when that fails.
 * No answer here carries a token.
 */
export class OAuthTokenService {
  constructor(
    private readonly deps: TokenDeps,
    private readonly guard: AddressGuardPolicy,
  ) {}

  async list(tenant: TenantContext, providerId?: string | null): Promise<OAuthTokenSummary[]> {
    return (await flows.callerTokens(this.deps.db, tenant.workspaceId, callerId(tenant), providerId ?? undefined)).map(summary);
  }

  async exists(tenant: TenantContext, providerId: string): Promise<{ has_token: boolean }> {
    return { has_token: (await this.list(tenant, providerId)).length > 0 };
  }

  async updateMetadata(tenant: TenantContext, tokenId: string, patch: OAuthTokenUpdateRequest): Promise<OAuthTokenSummary> {
    const { db, now } = this.deps;
    return db.transaction(async (tx) => {
      const token = await this.owned(tx, tenant, tokenId);
      await flows.updateTokenMetadata(tx, tenant.workspaceId, token.id, {
        label: patch.provider_account_label,
        isDefault: patch.is_default ?? undefined,
        now: now(),
      });
      if (patch.is_default) await flows.clearDefault(tx, tenant.workspaceId, token.user_id, token.provider_ref, token.id);
      return summary((await flows.findToken(tx, tenant.workspaceId, token.id))!);
    });
  }

  async deleteOne(tenant: TenantContext, tokenId: string): Promise<void> {
    const token = await this.owned(this.deps.db, tenant, tokenId);
    await this.revoke(token);
    await flows.deleteToken(this.deps.db, tenant.workspaceId, token.id);
  }

  /** Every token of the caller for a provider, across agents. */
  async deleteForProvider(tenant: TenantContext, providerId: string): Promise<TokensRevoked> {
    const tokens = await flows.callerTokens(this.deps.db, tenant.workspaceId, callerId(tenant), providerId);
    let revoked = 0;
    for (const token of tokens) {
      if (await this.revoke(token)) revoked++;
      await flows.deleteToken(this.deps.db, tenant.workspaceId, token.id);
    }
    return {
      message: tokens.length > 0 ? "Tokens revoked" : "No tokens to revoke",
      provider_id: providerId,
      deleted: tokens.length,
      revoked_at_provider: revoked,
    };
  }

  async slackExists(tenant: TenantContext): Promise<{ has_token: boolean }> {
    return { has_token: (await flows.slackTokens(this.deps.db, tenant.workspaceId)).length > 0 };
  }

  /**
   * Every Slack token of the workspace, revoked at Slack (auth.revoke) and deleted. Tokens
   * Slack could not be asked about are kept, and the answer is a 503 saying how many.
   */
  async revokeSlack(tenant: TenantContext): Promise<TokensRevoked> {
    const tokens = await flows.slackTokens(this.deps.db, tenant.workspaceId);
    let deleted = 0;
    const failures: string[] = [];
    for (const token of tokens) {
      try {
        await this.revoke(token);
      } catch (error) {
        failures.push((error as Error).message);
        continue;
      }
      await flows.deleteToken(this.deps.db, tenant.workspaceId, token.id);
      deleted++;
    }
    if (failures.length > 0) {
      throw new SlipwayError(
        "unavailable",
        `${failures.length} of ${tokens.length} Slack tokens could not be revoked at Slack and were kept (${deleted} revoked and deleted): ${failures[0]}`,
      );
    }
    return { message: deleted > 0 ? "Slack tokens revoked" : "No Slack tokens to revoke", deleted, revoked_at_provider: deleted };
  }

  async listConnections(tenant: TenantContext, agentId: string): Promise<{ data: AgentConnectionResponse[] }> {
    return { data: (await connections.listConnections(this.deps.db, tenant.workspaceId, agentId)).map(connectionToWire) };
  }

  /** The token's owner lets an agent use it. */
  async connect(tenant: TenantContext, agentId: string, request: CreateAgentConnectionRequest): Promise<AgentConnectionResponse> {
    const { db, newId, now } = this.deps;
    return db.transaction(async (tx) => {
      const token = await this.owned(tx, tenant, request.oauth_token_id);
      const id = newId();
      const created = await connections.insertConnection(tx, {
        id,
        workspace_id: tenant.workspaceId,
        agent_id: agentId,
        oauth_token_id: token.id,
        created_by: callerId(tenant),
        created_at: now(),
      });
      if (!created) throw conflict(`agent '${agentId}' is already connected to OAuth token '${token.id}'`);
      return connectionToWire((await connections.findConnection(tx, tenant.workspaceId, id))!);
    });
  }

  async disconnect(tenant: TenantContext, agentId: string, connectionId: string): Promise<void> {
    if (!(await connections.deleteConnection(this.deps.db, tenant.workspaceId, agentId, connectionId))) {
      throw notFound(`connection '${connectionId}' of agent '${agentId}' not found`);
    }
  }

  /** The caller's token, or 404 (another user's token is not revealed to exist). */
  private async owned(q: Parameters<typeof flows.findToken>[0], tenant: TenantContext, tokenId: string): Promise<flows.TokenWithProvider> {
    const token = await flows.findToken(q, tenant.workspaceId, tokenId);
    const caller = callerId(tenant);
    if (!token || (token.user_id !== caller && token.ls_user_id !== caller)) throw notFound(`OAuth token '${tokenId}' not found`);
    return token;
  }

  /** Revokes at the provider when it can be asked (true then); throws when the provider could not be reached. */
  private async revoke(token: flows.TokenRow): Promise<boolean> {
    const { db, secretsKey } = this.deps;
    const provider = await providers.findProviderById(db, token.provider_ref);
    if (!provider) return false;
    const access = openTokenField(secretsKey, token.id, "access_token", token.access_token_sealed);
    if (provider.provider_type === "slack") return revokeAtSlack(provider.revocation_url, access, this.guard);
    const client = providerClient(secretsKey, provider);
    // Revoking the refresh token ends the grant at most providers; the access token too, for the others.
    const refresh = token.refresh_token_sealed ? openTokenField(secretsKey, token.id, "refresh_token", token.refresh_token_sealed) : undefined;
    const revoked = refresh ? await revokeToken(client, refresh, "refresh_token", this.guard) : false;
    return (await revokeToken(client, access, "access_token", this.guard)) || revoked;
  }
}

function iso(value: Date | null): string | null {
  return value ? new Date(value).toISOString() : null;
}

function summary(row: flows.TokenWithProvider): OAuthTokenSummary {
  return {
    id: row.id,
    provider_id: row.provider_id,
    provider_account_label: row.provider_account_label,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
    is_default: row.is_default,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

function connectionToWire(row: connections.ConnectionView): AgentConnectionResponse {
  return {
    id: row.id,
    agent_id: row.agent_id,
    oauth_token_id: row.oauth_token_id,
    provider_id: row.provider_id,
    provider_account_label: row.provider_account_label,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
    created_by: row.created_by,
    created_at: new Date(row.created_at).toISOString(),
  };
}
