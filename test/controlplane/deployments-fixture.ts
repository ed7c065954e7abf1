import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll } from "vitest";
import type { ControlPlaneDeps, Plan } from "../../src/controlplane/context.ts";
import { routeModules } from "../../src/controlplane/routes.ts";
import type { Database } from "../../src/storage/database.ts";
import type { BackendName } from "../support/backends.ts";
import { openHarness } from "./tenancy-harness.ts";

/**
 * Test fixture for the deployment, revision and listener suites: the tenancy harness's real
 * control-plane app (auth hook, validator, error mapping) with every route module mounted,
 * over a fresh database of the given back end, and tenants made through the real tenancy
 * service. One per test file: opening PGlite costs seconds, so tests share it and isolate
 * themselves by workspace instead.
 */
export interface ControlPlaneFixture {
  app: FastifyInstance;
  db: Database;
  deps: ControlPlaneDeps;
  /** A new organization on `plan` with one workspace and a key scoped to it. */
  tenant(plan?: Plan): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  workspaceId: string;
  organizationId: string;
  headers: Record<string, string>;
  /** app.inject with this tenant's credentials; `prefix` mounts the call under /api-host. */
  call(method: InjectOptions["method"], url: string, payload?: unknown, prefix?: "" | "/api-host"): Promise<LightMyRequestResponse>;
}

export const PUBLIC_URL = "http://slipway.test";

export async function startControlPlane(backend: BackendName): Promise<ControlPlaneFixture> {
  const harness = await openHarness(backend, { modules: routeModules });
  const { app, db, deps, tenancy } = harness;
  deps.publicUrl = PUBLIC_URL;
  return {
    app,
    db,
    deps,
    async tenant(plan: Plan = "self_hosted_enterprise") {
      const made = await tenancy.bootstrap({ plan, keyScope: "workspace" });
      const headers = { "x-api-key": made.api_key };
      return {
        workspaceId: made.workspace_id,
        organizationId: made.organization_id,
        headers,
        call: (method, url, payload, prefix = "") =>
          app.inject({ method, url: `${prefix}${url}`, headers, ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }) }),
      };
    },
    close: () => harness.close(),
  };
}

/**
 * For a test file that reads the control plane's own OpenAPI document: one control plane
 * (PGlite) started before the file's tests and closed after them. Call the getters inside
 * the tests.
 */
export function servedDocument<T>(): { cp: () => ControlPlaneFixture; document: () => T } {
  let cp: ControlPlaneFixture | undefined;
  let document: T | undefined;
  beforeAll(async () => {
    cp = await startControlPlane("pglite");
    document = (await cp.app.inject({ method: "GET", url: "/openapi.json" })).json();
  });
  afterAll(async () => cp?.close());
  return { cp: () => cp!, document: () => document! };
}

/** A valid create body for a git (github source) deployment. */
export function githubDeployment(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    source: "github",
    source_config: { repo_url: "https://github.com/example/agent", deployment_type: "dev", build_on_push: false },
    source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-test-secret-value" }],
    ...overrides,
  };
}
