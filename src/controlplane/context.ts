import type { FastifyInstance } from "fastify";
import type { Database } from "../storage/database.ts";

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

/** Infrastructure the control-plane routes need; built once in main.ts / cli/up.ts. */
export interface ControlPlaneDeps {
  db: Database;
  /** Key that encrypts deployment secrets at rest (32 bytes). */
  secretsKey: Buffer;
  /** Injected clock and id source, so tests can pin them. */
  now: () => Date;
  newId: () => string;
  /** Public base URL deployments are reached under (their `url` field). */
  publicUrl: string;
}

/** Every resource folder exports one of these; `app.ts` mounts it at / and /api-host. */
export type RegisterRoutes = (app: FastifyInstance, deps: ControlPlaneDeps) => void | Promise<void>;

declare module "fastify" {
  interface FastifyRequest {
    tenant?: TenantContext;
  }
}
