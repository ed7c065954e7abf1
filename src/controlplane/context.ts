import type { FastifyRequest } from "fastify";
import type { AddressGuardPolicy } from "../net/address-guard.ts";
import type { Database } from "../storage/database.ts";
import type { HttpApp } from "../http/server.ts";
import type { ControlPlaneServices } from "./services.ts";
import type { Caller } from "./tenancy/authenticate.ts";

/** Organisation plans; listeners are only for `self_hosted_enterprise`. */
export type Plan = "free" | "plus" | "enterprise" | "self_hosted_enterprise";

/**
 * Who is calling, resolved by the auth hook before any route runs. Routes that work on
 * workspace resources read `workspaceId`; the hook has already refused requests that
 * name no workspace or one the credential cannot reach.
 */
export interface TenantContext {
  organizationId: string;
  workspaceId: string;
  plan: Plan;
  /** The API key id or bearer subject, for audit and rate limiting. */
  principal: { kind: "api_key" | "bearer"; id: string };
}

/** Infrastructure the control-plane services need; built once by startControlPlane (server.ts) or a test. */
export interface ControlPlaneDeps {
  db: Database;
  /** Key that encrypts deployment secrets at rest (32 bytes). */
  secretsKey: Buffer;
  /** Injected clock and id source, so tests can pin them. */
  now: () => Date;
  newId: () => string;
  /** Public base URL deployments are reached under (their `url` field). */
  publicUrl: string;
  /**
   * Where uploaded sources, builds and embedded deployment databases live (the `slipway up`
   * data directory). Without it, uploads are refused (in-process tests of other routes).
   */
  dataDir?: string;
  /** How long a revision made by a push waits for a newer push (default 3 s). */
  pushQuietMs?: number;
  /** Told when deployments are marked for deletion, so their URL answers 404 at once (the router). */
  onDeploymentsDeleted?: (ids: readonly string[]) => void;
  /**
   * Private or loopback git hosts integrations may name (`--allow-private-git-hosts`).
   * Without it, only public hosts are accepted.
   */
  gitHosts?: AddressGuardPolicy;
  /** Deployments a workspace may have at once (`--max-deployments-per-workspace`); 0 or unset: no limit. */
  maxDeploymentsPerWorkspace?: number;
  /** Deployments run as containers (`--runtime docker`): image sources (`external_docker`, `internal_docker`) are accepted. */
  containerRuntime?: boolean;
}

/**
 * Every resource folder exports one of these; `app.ts` mounts it at / (the /api-host alias
 * reaches the same routes), with
 * the services it built once (`buildServices`). A module takes the services it serves:
 * `(app, { deployments }) => ...`; the rules live there, not in the routes.
 */
export type RegisterRoutes = (app: HttpApp, services: ControlPlaneServices) => void | Promise<void>;

/**
 * The tenant the auth hook resolved for this request. Every route mounted through
 * `routes.ts` is behind that hook, so a missing tenant is a wiring bug (500), never a
 * client error.
 */
export function requireTenant(request: FastifyRequest): TenantContext {
  if (!request.tenant) throw new Error(`route ${request.method} ${request.url} ran without the auth hook`);
  return request.tenant;
}

declare module "fastify" {
  interface FastifyRequest {
    tenant?: TenantContext;
    /** Set instead of `tenant` on routes with `config.anyWorkspace`. */
    caller?: Caller;
  }
  interface FastifyContextConfig {
    /** Serve without credentials (health, docs, OAuth redirects from a provider). */
    public?: boolean;
    /** Needs a valid credential but no workspace (X-Tenant-Id is not read): `request.caller` is set. */
    anyWorkspace?: boolean;
  }
}
