import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../../src/auth/api-key.ts";
import { buildControlPlaneApp, resolveRateLimitIdentity } from "../../src/controlplane/app.ts";
import { createAuthenticator, type Authenticator } from "../../src/controlplane/tenancy/authenticate.ts";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { MemoryStore, type RuleSource } from "../../src/ratelimit/index.ts";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { BACKENDS } from "../support/backends.ts";
import { OWN_MODULES, as, json, openHarness, type Harness } from "./tenancy-harness.ts";

/** The wiring between authentication and src/ratelimit/: who gets counted as what. */
const POLICY: RuleSource[] = [
  { name: "key", category: "Default (API key)", tier: "default", identity: "api-key", limit: "2/60" },
  { name: "ip", category: "Public (catch-all)", tier: "catch-all", identity: "ip", limit: "3/60" },
];
const LIST = "/v1/integrations/github/install";

describe.each(BACKENDS)("rate-limit identity on %s", (backend) => {
  let h: Harness;
  let tenant: BootstrapResult;
  let authenticator: Authenticator;
  let app: FastifyInstance;

  beforeAll(async () => {
    h = await openHarness(backend);
    tenant = await h.tenancy.bootstrap({ orgName: "limits" });
    authenticator = createAuthenticator({ db: h.db });
    app = await buildControlPlaneApp({
      deps: h.deps,
      authenticator,
      modules: OWN_MODULES,
      logLevel: "error",
      rateLimit: {
        enabled: true,
        region: "us",
        policy: POLICY,
        store: new MemoryStore(),
        trustedProxies: [],
        resolveIdentity: (request) => resolveRateLimitIdentity(authenticator, request),
      },
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  it("names a live key by its id, and nothing else", async () => {
    const identity = (headers: Record<string, string>) => resolveRateLimitIdentity(authenticator, { headers } as unknown as FastifyRequest);
    expect(await identity({ "x-api-key": tenant.api_key })).toEqual({ apiKey: tenant.api_key_id });
    expect(await identity({ "x-api-key": generateApiKey().key })).toEqual({});
    expect(await identity({ "x-api-key": "garbage" })).toEqual({});
    expect(await identity({ authorization: "Bearer whatever" })).toEqual({});
    expect(await identity({})).toEqual({});
  });

  it("counts a valid key in its own bucket and bad keys against the IP", async () => {
    const headers = as(tenant.api_key, tenant.workspace_id);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.inject({ method: "GET", url: LIST, headers })).statusCode);
    expect(statuses).toEqual([200, 200, 429]);

    const bad = [];
    for (let i = 0; i < 4; i++) bad.push((await app.inject({ method: "GET", url: LIST, headers: as(generateApiKey().key, tenant.workspace_id) })).statusCode);
    expect(bad).toEqual([401, 401, 401, 429]);
    const refused = await app.inject({ method: "GET", url: LIST, headers: as("garbage") });
    expect(refused.statusCode).toBe(429);
    expect(typeof json(refused).detail).toBe("string");
    expect(refused.headers["retry-after"]).toBeDefined();
  });
});
