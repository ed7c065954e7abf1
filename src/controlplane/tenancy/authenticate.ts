import type { IncomingHttpHeaders } from "node:http";
import { apiKeyMatches, parseApiKey } from "../../auth/api-key.ts";
import type { BearerResult, BearerVerifier } from "../../auth/bearer.ts";
import { SlipwayError, forbidden } from "../../http/errors.ts";
import type { Queryable } from "../../storage/database.ts";
import type { Plan, TenantContext } from "../context.ts";
import { isUuid } from "../deployments/wire.ts";
import * as repo from "./repository.ts";

/**
 * Turns request headers into a TenantContext, or refuses:
 *
 * | credential                     | X-Tenant-Id          | outcome                                   |
 * |--------------------------------|----------------------|-------------------------------------------|
 * | none                           | any                  | 401                                       |
 * | unknown / malformed / revoked  | any                  | 401                                       |
 * | workspace key (or token)       | absent or its own    | its workspace                             |
 * | workspace key (or token)       | another workspace    | 403                                       |
 * | organization key (or token)    | absent               | 403 "requires workspace specification"    |
 * | organization key (or token)    | a workspace of it    | that workspace                            |
 * | organization key (or token)    | anything else        | 403                                       |
 *
 * `X-Api-Key` wins when both it and `Authorization: Bearer` are sent.
 */
export interface ApiKeyIdentity {
  apiKeyId: string;
  organizationId: string;
  /** Null for an organization key. */
  workspaceId: string | null;
  plan: Plan;
}

export interface Authenticator {
  /** The caller's tenant, or a SlipwayError (401/403). */
  authenticate(headers: IncomingHttpHeaders): Promise<TenantContext>;
  /**
   * The identity behind the request's `X-Api-Key`, or null when it is absent, unknown or
   * revoked. Never throws; memoised per request, so the rate limiter and the auth hook
   * share one lookup.
   */
  apiKeyIdentity(headers: IncomingHttpHeaders): Promise<ApiKeyIdentity | null>;
  /**
   * Who the rate limiter should count, without throwing: `{apiKey: <key id>}` for a live
   * API key, `{userId: <sub>}` for a valid bearer token, `{}` otherwise (the IP then).
   * Ids, never secrets, so counters in Redis hold nothing worth stealing.
   */
  callerIdentity(headers: IncomingHttpHeaders): Promise<{ apiKey?: string; userId?: string }>;
  /**
   * Whose credential this is, before any workspace is chosen (401 for none or a bad one):
   * what routes that serve every workspace of an organization key need (the console's
   * workspace list).
   */
  caller(headers: IncomingHttpHeaders): Promise<Caller>;
}

export function createAuthenticator(deps: { db: Queryable; bearer?: BearerVerifier }): Authenticator {
  const { db, bearer } = deps;
  const memo = new WeakMap<IncomingHttpHeaders, Promise<ApiKeyIdentity | null>>();
  const bearerMemo = new WeakMap<IncomingHttpHeaders, Promise<BearerResult>>();

  async function lookupKey(presented: string): Promise<ApiKeyIdentity | null> {
    const parsed = parseApiKey(presented);
    if (!parsed) return null;
    const row = await repo.findApiKeyByLookup(db, parsed.lookupId);
    if (!row || row.revoked_at !== null || !apiKeyMatches(presented, row.key_hash)) return null;
    return { apiKeyId: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id, plan: row.plan };
  }

  function apiKeyIdentity(headers: IncomingHttpHeaders): Promise<ApiKeyIdentity | null> {
    let pending = memo.get(headers);
    if (!pending) {
      const presented = single(headers["x-api-key"]);
      pending = presented ? lookupKey(presented).catch(() => null) : Promise.resolve(null);
      memo.set(headers, pending);
    }
    return pending;
  }

  /** The verified bearer token of the request, memoised like API keys; undefined when none is sent or enabled. */
  function bearerResult(headers: IncomingHttpHeaders): Promise<BearerResult> | undefined {
    const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(single(headers.authorization) ?? "");
    if (!match || !bearer) return undefined;
    let pending = bearerMemo.get(headers);
    if (!pending) {
      pending = bearer.verify(match[1]);
      bearerMemo.set(headers, pending);
    }
    return pending;
  }

  async function fromBearer(headers: IncomingHttpHeaders): Promise<Caller> {
    if (!/^Bearer[ \t]+([^\s]+)[ \t]*$/i.test(single(headers.authorization) ?? "")) {
      throw unauthorized("unsupported Authorization scheme: send X-Api-Key, or Authorization: Bearer <token>");
    }
    const pending = bearerResult(headers);
    if (!pending) throw unauthorized("bearer tokens are not enabled on this server: send X-Api-Key");
    const result = await pending;
    if (!result.ok) throw unauthorized(`invalid bearer token: ${result.reason}`);
    const { claims } = result;
    const organization = await repo.findOrganization(db, claims.organizationId);
    if (!organization) throw unauthorized("invalid bearer token: its organization does not exist");
    if (claims.workspaceId) {
      const workspace = await repo.findWorkspace(db, claims.workspaceId);
      if (!workspace || workspace.organization_id !== organization.id) {
        throw unauthorized("invalid bearer token: its workspace does not exist in its organization");
      }
    }
    return {
      organizationId: organization.id,
      workspaceId: claims.workspaceId ?? null,
      plan: organization.plan,
      principal: { kind: "bearer", id: claims.subject },
    };
  }

  async function credentialOf(headers: IncomingHttpHeaders): Promise<Caller> {
    const presented = single(headers["x-api-key"]);
    if (presented) {
      const identity = await apiKeyIdentity(headers);
      if (!identity) throw unauthorized("invalid API key");
      return { ...identity, principal: { kind: "api_key", id: identity.apiKeyId } };
    }
    if (single(headers.authorization)) return fromBearer(headers);
    throw unauthorized("missing API key: send it in the X-Api-Key header");
  }

  return {
    apiKeyIdentity,
    caller: credentialOf,
    async callerIdentity(headers) {
      if (single(headers["x-api-key"])) {
        const identity = await apiKeyIdentity(headers);
        return identity ? { apiKey: identity.apiKeyId } : {};
      }
      const result = await bearerResult(headers)?.catch(() => undefined);
      return result?.ok ? { userId: result.claims.subject } : {};
    },
    async authenticate(headers) {
      const credential = await credentialOf(headers);
      const requested = single(headers["x-tenant-id"])?.trim();
      if (!requested) {
        if (credential.workspaceId === null) {
          throw forbidden(
            "this credential is scoped to an organization and requires workspace specification: " + "set the X-Tenant-Id header to a workspace id",
          );
        }
        return tenant(credential, credential.workspaceId);
      }
      const shown = requested.length > 64 ? `${requested.slice(0, 64)}…` : requested;
      const denied = forbidden(`this credential has no access to workspace '${shown}'`);
      if (!isUuid(requested)) throw denied;
      const wanted = requested.toLowerCase();
      if (credential.workspaceId !== null) {
        if (wanted !== credential.workspaceId) throw denied;
        return tenant(credential, wanted);
      }
      const workspace = await repo.findWorkspace(db, wanted);
      if (!workspace || workspace.organization_id !== credential.organizationId) throw denied;
      return tenant(credential, workspace.id);
    },
  };
}

/** A verified credential: its organization, and its workspace unless it serves the whole organization. */
export interface Caller {
  organizationId: string;
  workspaceId: string | null;
  plan: Plan;
  principal: TenantContext["principal"];
}

function tenant(credential: Caller, workspaceId: string): TenantContext {
  return { organizationId: credential.organizationId, workspaceId, plan: credential.plan, principal: credential.principal };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function unauthorized(message: string): SlipwayError {
  return new SlipwayError("unauthorized", message);
}
