import { registerTenancyRoutes } from "../../src/controlplane/tenancy/routes.ts";
import { randomUUID } from "node:crypto";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { createBearerVerifier, type BearerConfig } from "../../src/auth/bearer.ts";
import { generateSecretsKey } from "../../src/auth/secret-box.ts";
import { buildControlPlaneApp } from "../../src/controlplane/app.ts";
import { registerAuthServiceRoutes } from "../../src/controlplane/authservice/routes.ts";
import type { ControlPlaneDeps, RegisterRoutes } from "../../src/controlplane/context.ts";
import { registerIntegrationRoutes } from "../../src/controlplane/integrations/routes.ts";
import { createAuthenticator, type Authenticator } from "../../src/controlplane/tenancy/authenticate.ts";
import { TenancyService } from "../../src/controlplane/tenancy/service.ts";
import type { AddressGuardPolicy } from "../../src/net/address-guard.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend, type BackendName } from "../support/backends.ts";

/**
 * A control plane on a fresh database of the given back end, for in-process
 * `app.inject()` tests. Open one per test file (PGlite takes seconds to start) and
 * give each test its own organizations.
 */
export interface Harness {
  app: FastifyInstance;
  db: Database;
  deps: ControlPlaneDeps;
  tenancy: TenancyService;
  authenticator: Authenticator;
  close(): Promise<void>;
}

export const OWN_MODULES: RegisterRoutes[] = [registerIntegrationRoutes, registerAuthServiceRoutes, registerTenancyRoutes];

export async function openHarness(
  backend: BackendName,
  options: { bearer?: BearerConfig; modules?: RegisterRoutes[]; gitHosts?: AddressGuardPolicy } = {},
): Promise<Harness> {
  const db = await openDatabase({ ...freshBackend(backend, "cp"), component: "control" });
  const deps: ControlPlaneDeps = {
    db,
    secretsKey: generateSecretsKey(),
    now: () => new Date(),
    newId: () => randomUUID(),
    publicUrl: "http://127.0.0.1:0",
    // Private git hosts (a forge on loopback) only when a suite allows them, as `slipway up` does.
    gitHosts: options.gitHosts,
  };
  const authenticator = createAuthenticator({ db, bearer: options.bearer ? createBearerVerifier(options.bearer) : undefined });
  const app = await buildControlPlaneApp({ deps, authenticator, modules: options.modules ?? OWN_MODULES, logLevel: "error" });
  await app.ready();
  return {
    app,
    db,
    deps,
    tenancy: new TenancyService(deps),
    authenticator,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/** Headers of a caller: its key and, optionally, the workspace it targets. */
export function as(apiKey: string, workspaceId?: string): Record<string, string> {
  return workspaceId ? { "x-api-key": apiKey, "x-tenant-id": workspaceId } : { "x-api-key": apiKey };
}

/** The body of a JSON response. */
export function json<T = any>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}
