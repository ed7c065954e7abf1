import { badRequest, invalidField, notFound } from "../../http/errors.ts";
import type { AddressGuardPolicy } from "../../net/address-guard.ts";
import type { ControlPlaneDeps, TenantContext } from "../context.ts";
import { isUuid } from "../deployments/wire.ts";
import { AuthWaiters } from "./auth-waiters.ts";
import { callerId } from "./caller.ts";
import * as connections from "./connection-repository.ts";
import * as flows from "./flow-repository.ts";
import type { AuthAuthenticateRequest, AuthAuthenticateResponse, AuthWaitResponse, CallbackQuery, CallbackResult } from "./flow-schemas.ts";
import { codeChallenge, randomToken, stateHash } from "./pkce.ts";
import * as providers from "./repository.ts";
import { exchangeCode, type TokenSet } from "./token-endpoint.ts";
import type { TokenKeeper } from "./token-keeper.ts";
import { openVerifier, providerClient, sealVerifier } from "./token-sealing.ts";

/** How long a user has to finish a flow at the provider. */
const FLOW_TTL_MS = 10 * 60_000;

export type FlowDeps = Pick<ControlPlaneDeps, "db" | "secretsKey" | "now" | "newId" | "publicUrl">;

/**
 * The authorization-code flow (RFC 6749 §4.1) with PKCE (RFC 7636): `authenticate` hands
 * back a token the user already has, or starts a flow and answers its authorization URL;
 * the provider sends the browser to `callback/{provider_id}`, which trades the code for
 * tokens; `wait/{auth_id}` returns once that is done.
 *
 * A flow's `state` is single-use: the callback claims the flow before calling the
 * provider, and a state that matches no pending flow of that provider (forged, replayed,
 * expired, another workspace's when the caller names one) is refused without a write.
 *
 * @example
 * const started = await flow.authenticate(tenant, { provider: "github", scopes: ["repo"] });
 * // the user opens started.url; the provider redirects to /v2/auth/callback/github?code=..&state=..
 * const done = await flow.wait(tenant, started.auth_id!, 30);
 */
export class OAuthFlowService {
  private readonly waiters: AuthWaiters;

  constructor(
    private readonly deps: FlowDeps,
    private readonly keeper: TokenKeeper,
    private readonly guard: AddressGuardPolicy,
  ) {
    this.waiters = new AuthWaiters(deps.db);
  }

  async authenticate(tenant: TenantContext, request: AuthAuthenticateRequest): Promise<AuthAuthenticateResponse> {
    const { db } = this.deps;
    if (request.use_agent_builder_public_oauth) {
      throw invalidField(
        ["body", "use_agent_builder_public_oauth"],
        "Slipway has no Agent Builder public OAuth apps: configure a provider with POST /v2/auth/providers",
        "unsupported",
      );
    }
    const provider = await providers.findProvider(db, tenant.workspaceId, request.provider, false);
    if (!provider) throw notFound(`OAuth provider '${request.provider}' not found`);
    const owner = request.user_id ?? request.ls_user_id ?? callerId(tenant);
    const scopes = [...new Set(request.scopes)].sort();
    const agentId = request.agent_id ?? null;

    let candidates = await flows.ownerTokens(db, tenant.workspaceId, owner, provider.id);
    if (request.token_id) {
      candidates = candidates.filter((t) => t.id === request.token_id);
      if (candidates.length === 0) throw notFound(`OAuth token '${request.token_id}' not found for this user and provider`);
    }
    const replaces = request.token_id ?? null;
    if (!request.force_new) {
      const covering = candidates.filter((t) => scopes.every((s) => t.scopes.includes(s)));
      let usable = covering.filter((t) => t.agent_id === agentId);
      if (agentId) {
        const connected = await connections.connectedTokenIds(db, tenant.workspaceId, agentId);
        usable = [...usable, ...covering.filter((t) => t.agent_id !== agentId && connected.has(t.id))];
        if (usable.length === 0 && covering.length > 0) {
          // The user has a token this agent may not use yet: they connect it (POST /v2/auth/agents/{agent_id}/connections).
          return {
            status: "connection_required",
            user_id: owner,
            metadata: { provider_id: provider.provider_id, agent_id: agentId, oauth_token_id: covering[0].id },
          };
        }
      } else if (usable.length === 0) usable = covering;
      const found = usable[0];
      if (found) {
        const token = await this.keeper.accessToken(found);
        if (token) return { status: "completed", token, user_id: owner, metadata: tokenMetadata(found) };
        const restart = await this.start(tenant, provider, { owner, scopes, agentId, request, replaces: found.id });
        return { status: "token_expired", ...restart, user_id: owner, metadata: { provider_id: provider.provider_id, oauth_token_id: found.id } };
      }
    }
    return { status: "pending", ...(await this.start(tenant, provider, { owner, scopes, agentId, request, replaces })), user_id: owner };
  }

  /** The provider's redirect (GET, no credentials: the state names the flow) or a frontend's relay of it (POST, in the caller's workspace). */
  async callback(providerId: string, query: CallbackQuery, workspaceId?: string): Promise<CallbackResult> {
    const { db, now } = this.deps;
    if (query.error) {
      const claimed = query.state ? await flows.claimAuthRequest(db, { stateHash: stateHash(query.state), providerId, workspaceId, now: now() }) : undefined;
      const why = `${query.error.slice(0, 100)}${query.error_description ? `: ${query.error_description.slice(0, 200)}` : ""}`;
      if (claimed) await this.fail(claimed, `the provider refused: ${why}`);
      throw badRequest(`the provider answered the authorization request with an error (${why})`);
    }
    if (!query.code) throw invalidField(["query", "code"], "Field required", "missing");
    if (!query.state) throw invalidField(["query", "state"], "Field required", "missing");
    const flow = await flows.claimAuthRequest(db, { stateHash: stateHash(query.state), providerId, workspaceId, now: now() });
    if (!flow) {
      throw badRequest(`no pending authorization of provider '${providerId}' matches this state (unknown, already used, expired, or of another workspace)`);
    }
    try {
      const provider = await providers.findProviderById(db, flow.provider_ref);
      if (!provider) throw notFound(`OAuth provider '${providerId}' not found`);
      const verifier = flow.code_verifier_sealed ? openVerifier(this.deps.secretsKey, flow.id, flow.code_verifier_sealed) : undefined;
      const set = await exchangeCode(
        providerClient(this.deps.secretsKey, provider),
        { code: query.code, redirectUri: flow.redirect_uri, verifier },
        this.guard,
      );
      await this.store(flow, set);
    } catch (error) {
      await this.fail(flow, (error as Error).message);
      throw error;
    }
    await this.waiters.announce(flow.id);
    return { status: "completed", auth_id: flow.id, provider_id: providerId, message: "Authentication complete: you can close this window." };
  }

  async wait(tenant: TenantContext, authId: string, timeoutSeconds: number): Promise<AuthWaitResponse> {
    const { db, now } = this.deps;
    const deadline = now().getTime() + timeoutSeconds * 1000;
    const caller = callerId(tenant);
    for (;;) {
      const flow = isUuid(authId) ? await flows.findAuthRequest(db, tenant.workspaceId, authId) : undefined;
      // Only whoever started the flow, or the user it is for, learns of it.
      if (!flow || (flow.requested_by !== caller && flow.user_id !== caller) || flow.status === "failed") return { status: "not_found" };
      if (flow.status === "completed") {
        const row = flow.token_id ? await flows.findToken(db, tenant.workspaceId, flow.token_id) : undefined;
        const token = row ? await this.keeper.accessToken(row) : undefined;
        return token ? { status: "completed", token } : { status: "not_found" };
      }
      if (new Date(flow.expires_at).getTime() <= now().getTime()) return { status: "not_found" };
      const left = deadline - now().getTime();
      if (left <= 0) return { status: timeoutSeconds === 0 ? "pending" : "timeout" };
      await this.waiters.pause(flow.id, left);
    }
  }

  private async start(
    tenant: TenantContext,
    provider: providers.ProviderRow,
    flow: { owner: string; scopes: string[]; agentId: string | null; request: AuthAuthenticateRequest; replaces: string | null },
  ): Promise<{ url: string; auth_id: string }> {
    const { db, newId, now, secretsKey, publicUrl } = this.deps;
    const id = newId();
    const state = randomToken();
    const verifier = provider.uses_pkce ? randomToken() : undefined;
    const redirectUri = new URL(`/v2/auth/callback/${encodeURIComponent(provider.provider_id)}`, publicUrl).href;
    const url = new URL(provider.auth_url);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", provider.client_id);
    url.searchParams.set("redirect_uri", redirectUri);
    if (flow.scopes.length > 0) url.searchParams.set("scope", flow.scopes.join(" "));
    url.searchParams.set("state", state);
    if (verifier) {
      const method = provider.code_challenge_method ?? "S256";
      url.searchParams.set("code_challenge", codeChallenge(verifier, method));
      url.searchParams.set("code_challenge_method", method);
    }
    if (provider.resource) url.searchParams.set("resource", provider.resource);
    const at = now();
    await flows.insertAuthRequest(db, {
      id,
      workspace_id: tenant.workspaceId,
      provider_ref: provider.id,
      provider_id: provider.provider_id,
      state_hash: stateHash(state),
      code_verifier_sealed: verifier ? sealVerifier(secretsKey, id, verifier) : null,
      redirect_uri: redirectUri,
      scopes: flow.scopes,
      user_id: flow.owner,
      ls_user_id: flow.request.ls_user_id ?? null,
      agent_id: flow.agentId,
      requested_by: callerId(tenant),
      replaces_token_id: flow.replaces,
      is_default: flow.request.is_default ?? true,
      created_at: at,
      expires_at: new Date(at.getTime() + FLOW_TTL_MS),
    });
    return { url: url.href, auth_id: id };
  }

  /** The token and the flow's end in one transaction: a failure leaves neither. */
  private async store(flow: flows.AuthRequestRow, set: TokenSet): Promise<void> {
    const { db, newId, now } = this.deps;
    await db.transaction(async (tx) => {
      const at = now();
      const replaced = flow.replaces_token_id ? await flows.findToken(tx, flow.workspace_id, flow.replaces_token_id) : undefined;
      const id = replaced?.id ?? newId();
      const secrets = this.keeper.sealed(id, set);
      // What the user was asked for, and anything more the provider says it granted:
      // later requests match on what they ask for (providers answer `scope` in their own forms).
      const scopes = [...new Set([...flow.scopes, ...(set.scopes ?? [])])].sort();
      if (replaced) {
        await flows.replaceTokenSecrets(tx, { ...replaced, ...secrets, scopes, updated_at: at });
      } else {
        await flows.insertToken(tx, {
          id,
          workspace_id: flow.workspace_id,
          provider_ref: flow.provider_ref,
          user_id: flow.user_id,
          ls_user_id: flow.ls_user_id,
          agent_id: flow.agent_id,
          scopes,
          ...secrets,
          provider_account_label: accountLabel(set.idToken),
          is_default: flow.is_default,
          created_at: at,
          updated_at: at,
        });
      }
      if (flow.is_default) await flows.clearDefault(tx, flow.workspace_id, flow.user_id, flow.provider_ref, id);
      await flows.finishAuthRequest(tx, flow.id, { status: "completed", tokenId: id, now: at });
    });
  }

  private async fail(flow: flows.AuthRequestRow, error: string): Promise<void> {
    await flows.finishAuthRequest(this.deps.db, flow.id, { status: "failed", error: error.slice(0, 500), now: this.deps.now() });
    await this.waiters.announce(flow.id);
  }
}

function tokenMetadata(row: flows.TokenWithProvider): Record<string, unknown> {
  return {
    token_id: row.id,
    provider_id: row.provider_id,
    scopes: row.scopes,
    expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    provider_account_label: row.provider_account_label,
  };
}

/** A label for the account a token is for, from an OpenID id_token's claims (not verified: a display name only). */
function accountLabel(idToken: string | undefined): string | null {
  if (!idToken) return null;
  try {
    const claims = JSON.parse(Buffer.from(idToken.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
    const label = claims.email ?? claims.preferred_username ?? claims.name ?? claims.sub;
    return typeof label === "string" ? label.slice(0, 200) : null;
  } catch {
    return null;
  }
}
