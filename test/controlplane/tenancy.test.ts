import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../../src/auth/api-key.ts";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { as, json, openHarness, type Harness } from "./tenancy-harness.ts";

const ISSUER = "https://idp.slipway.test/";
const SECRET = "tenancy-test-shared-secret-0123456789abcdef";
const LIST = "/v1/integrations/github/install";

function bearer(claims: Record<string, unknown>, expires: string | number = "5m"): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience("slipway")
    .setSubject("alice@example.test")
    .setExpirationTime(expires)
    .sign(new TextEncoder().encode(SECRET));
}

describe.each(BACKENDS)("tenancy and authentication on %s", (backend) => {
  let h: Harness;
  let orgA: BootstrapResult;
  let orgB: BootstrapResult;
  let siblingWorkspace: string;
  let workspaceKey: string;

  beforeAll(async () => {
    h = await openHarness(backend, { bearer: { issuer: ISSUER, secret: SECRET }, gitHosts: { allowHosts: ["127.0.0.1"] } });
    orgA = await h.tenancy.bootstrap({ orgName: "A", plan: "enterprise" });
    orgB = await h.tenancy.bootstrap({ orgName: "B", plan: "free" });
    siblingWorkspace = (await h.tenancy.createWorkspace(orgA.organization_id, "A-second")).workspace_id;
    workspaceKey = (await h.tenancy.createApiKey(orgA.organization_id, siblingWorkspace, "ci")).api_key;
  });
  afterAll(() => h?.close());

  const get = (headers: Record<string, string>, url = LIST) => h.app.inject({ method: "GET", url, headers });

  it("answers 401 without credentials, on both mounts", async () => {
    for (const url of [LIST, `/api-host${LIST}`, "/v2/auth/providers"]) {
      const response = await get({}, url);
      expect(response.statusCode).toBe(401);
      expect(json(response).detail).toMatch(/missing API key.*X-Api-Key/);
    }
  });

  it("answers 401 for malformed, unknown and revoked keys", async () => {
    for (const key of ["nonsense", generateApiKey().key, orgA.api_key.slice(0, -1) + (orgA.api_key.endsWith("x") ? "y" : "x")]) {
      const response = await get(as(key, orgA.workspace_id));
      expect(response.statusCode).toBe(401);
      expect(json(response)).toEqual({ detail: "invalid API key" });
    }
    const doomed = await h.tenancy.createApiKey(orgA.organization_id, null, "to revoke");
    expect((await get(as(doomed.api_key, orgA.workspace_id))).statusCode).toBe(200);
    expect(await h.tenancy.revokeApiKey(doomed.api_key_id)).toBe(true);
    const after = await get(as(doomed.api_key, orgA.workspace_id));
    expect(after.statusCode).toBe(401);
    expect(await h.tenancy.revokeApiKey(doomed.api_key_id)).toBe(false);
  });

  it("requires workspace specification for an organization key", async () => {
    const response = await get(as(orgA.api_key));
    expect(response.statusCode).toBe(403);
    expect(json(response).detail).toMatch(/requires workspace specification/);
  });

  it("lets an organization key reach each of its workspaces and no other", async () => {
    expect((await get(as(orgA.api_key, orgA.workspace_id))).statusCode).toBe(200);
    expect((await get(as(orgA.api_key, siblingWorkspace))).statusCode).toBe(200);
    expect((await get(as(orgA.api_key, siblingWorkspace.toUpperCase()))).statusCode).toBe(200);
    for (const foreign of [orgB.workspace_id, randomUUID(), "not-a-uuid", "' OR 1=1 --"]) {
      const response = await get(as(orgA.api_key, foreign));
      expect(response.statusCode).toBe(403);
      expect(json(response).detail).toMatch(/no access to workspace/);
    }
  });

  it("lists the workspaces a credential reaches, without X-Tenant-Id (the console's sign-in)", async () => {
    const org = await get({ "x-api-key": orgA.api_key }, "/v2/workspaces");
    expect(org.statusCode).toBe(200);
    expect(json(org)).toMatchObject({ organization_id: orgA.organization_id, scope: "organization", offset: null });
    expect(
      json(org)
        .resources.map((w: { id: string }) => w.id)
        .sort(),
    ).toEqual([orgA.workspace_id, siblingWorkspace].sort());
    // A workspace key sees its own only; the same path under /api-host; a token of org B sees B's.
    const own = await get({ "x-api-key": workspaceKey }, "/api-host/v2/workspaces");
    expect(json(own)).toMatchObject({ scope: "workspace", resources: [{ id: siblingWorkspace, name: "A-second" }] });
    const token = await bearer({ org_id: orgB.organization_id });
    expect(json(await get({ authorization: `Bearer ${token}` }, "/v2/workspaces")).resources.map((w: { id: string }) => w.id)).toEqual([orgB.workspace_id]);
    for (const headers of [{}, { "x-api-key": "nonsense" }] as Record<string, string>[]) expect((await get(headers, "/v2/workspaces")).statusCode).toBe(401);
  });

  it("creates, lists and revokes API keys over HTTP, each credential within its own reach", async () => {
    const call = (key: string, method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) =>
      h.app.inject({ method, url, headers: { "x-api-key": key }, ...(payload === undefined ? {} : { payload: payload as object }) });
    const made = await call(orgA.api_key, "POST", "/v2/api-keys", { description: "from the console", workspace_id: siblingWorkspace });
    expect(made.statusCode).toBe(201);
    const fresh = json(made);
    expect(fresh).toMatchObject({ organization_id: orgA.organization_id, workspace_id: siblingWorkspace });
    expect((await get(as(fresh.api_key, siblingWorkspace))).statusCode).toBe(200);
    const listed = json(await call(orgA.api_key, "GET", "/v2/api-keys")).resources;
    expect(listed.find((key: { id: string }) => key.id === fresh.api_key_id)).toMatchObject({ description: "from the console", revoked: false });
    expect(JSON.stringify(listed)).not.toContain(fresh.api_key);
    // A workspace key sees and makes keys of its workspace only.
    const seen = json(await call(workspaceKey, "GET", "/v2/api-keys")).resources;
    expect(seen.every((key: { workspace_id: string }) => key.workspace_id === siblingWorkspace)).toBe(true);
    expect((await call(workspaceKey, "POST", "/v2/api-keys", { workspace_id: orgA.workspace_id })).statusCode).toBe(403);
    expect((await call(workspaceKey, "POST", "/v2/api-keys", { workspace_id: null })).statusCode).toBe(403);
    const foreign = await call(orgA.api_key, "POST", "/v2/api-keys", { workspace_id: orgB.workspace_id });
    expect(foreign.statusCode).toBe(422);
    expect(json(foreign).detail[0].loc).toEqual(["body", "workspace_id"]);
    // Another organization's key is not found; revoking works once, and the key stops working.
    expect((await call(orgB.api_key, "DELETE", `/v2/api-keys/${fresh.api_key_id}`)).statusCode).toBe(404);
    expect((await call(orgA.api_key, "DELETE", `/v2/api-keys/${fresh.api_key_id}`)).statusCode).toBe(204);
    expect((await get(as(fresh.api_key, siblingWorkspace))).statusCode).toBe(401);
    expect((await call(orgA.api_key, "DELETE", `/v2/api-keys/${randomUUID()}`)).statusCode).toBe(404);
  });

  it("confines a workspace key to its workspace", async () => {
    expect((await get(as(workspaceKey))).statusCode).toBe(200);
    expect((await get(as(workspaceKey, siblingWorkspace))).statusCode).toBe(200);
    const other = await get(as(workspaceKey, orgA.workspace_id));
    expect(other.statusCode).toBe(403);
    expect(json(other).detail).toContain(orgA.workspace_id);
  });

  it("routes requests by key: an org key and a workspace key of one org act in their own workspaces", async () => {
    const created = await h.app.inject({
      method: "POST",
      url: LIST,
      headers: as(workspaceKey),
      payload: { name: "seen-by-sibling-only", base_url: "git://127.0.0.1:9418/" },
    });
    expect(created.statusCode).toBe(201);
    const sibling = json<{ id: string }[]>(await get(as(orgA.api_key, siblingWorkspace)));
    expect(sibling.map((i) => i.id)).toContain(json(created).id);
    const first = json<{ id: string }[]>(await get(as(orgA.api_key, orgA.workspace_id)));
    expect(first.map((i) => i.id)).not.toContain(json(created).id);
  });

  it("accepts bearer tokens from the configured issuer, with the same workspace rules", async () => {
    const orgToken = await bearer({ org_id: orgA.organization_id });
    const ok = await get({ authorization: `Bearer ${orgToken}`, "x-tenant-id": orgA.workspace_id });
    expect(ok.statusCode).toBe(200);
    const noWorkspace = await get({ authorization: `Bearer ${orgToken}` });
    expect(noWorkspace.statusCode).toBe(403);
    expect(json(noWorkspace).detail).toMatch(/requires workspace specification/);
    const foreign = await get({ authorization: `bearer ${orgToken}`, "x-tenant-id": orgB.workspace_id });
    expect(foreign.statusCode).toBe(403);

    const scoped = await bearer({ org_id: orgA.organization_id, workspace_id: siblingWorkspace });
    expect((await get({ authorization: `Bearer ${scoped}` })).statusCode).toBe(200);
    expect((await get({ authorization: `Bearer ${scoped}`, "x-tenant-id": orgA.workspace_id })).statusCode).toBe(403);
  });

  it("refuses bad bearer tokens and other schemes with 401", async () => {
    const cases: [string, RegExp][] = [
      [`Bearer ${await bearer({ org_id: orgA.organization_id }, Math.floor(Date.now() / 1000) - 600)}`, /expired/],
      [`Bearer ${await bearer({ org_id: randomUUID() })}`, /organization does not exist/],
      [`Bearer ${await bearer({ org_id: orgA.organization_id, workspace_id: orgB.workspace_id })}`, /workspace does not exist/],
      [`Bearer ${await bearer({})}`, /org_id/],
      ["Bearer not-a-token", /malformed|rejected/],
      [`Basic ${Buffer.from("a:b").toString("base64")}`, /unsupported Authorization scheme/],
    ];
    for (const [authorization, reason] of cases) {
      const response = await get({ authorization, "x-tenant-id": orgA.workspace_id });
      expect(response.statusCode, authorization).toBe(401);
      expect(json(response).detail).toMatch(reason);
    }
  });

  it("tells the rate limiter a valid token's subject, and nothing for a bad one", async () => {
    const token = await bearer({ org_id: orgA.organization_id });
    expect(await h.authenticator.callerIdentity({ authorization: `Bearer ${token}` })).toEqual({ userId: "alice@example.test" });
    expect(await h.authenticator.callerIdentity({ authorization: `Bearer ${token}x` })).toEqual({});
    expect(await h.authenticator.callerIdentity({ "x-api-key": orgA.api_key })).toEqual({ apiKey: orgA.api_key_id });
  });

  it("lets X-Api-Key win over Authorization", async () => {
    const token = await bearer({ org_id: orgA.organization_id });
    const response = await get({ "x-api-key": "slw_bogus", authorization: `Bearer ${token}`, "x-tenant-id": orgA.workspace_id });
    expect(response.statusCode).toBe(401);
  });

  it("serves health, OpenAPI and docs without credentials", async () => {
    expect(json(await get({}, "/ok"))).toEqual({ ok: true });
    const doc = json(await get({}, "/openapi.json"));
    expect(doc.paths[LIST].get.operationId).toBe("list_github_integrations_v1_integrations_github_install_get");
    expect(doc.paths["/v1/integrations/github/{integration_id}/repos"].get.parameters[0]).toMatchObject({ name: "integration_id", in: "path" });
    expect(doc.paths["/v2/auth/providers/{provider_id}"]).toHaveProperty("patch");
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/api-host"))).toEqual([]);
    expect(doc.components.securitySchemes["API Key"]).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
    expect(doc.components.securitySchemes["Bearer Auth"]).toMatchObject({ type: "http", scheme: "bearer" });
    const mirrored = json(await get({}, "/api-host/openapi.json"));
    expect(mirrored.servers).toEqual([{ url: "/api-host" }]);
    expect(mirrored.paths[LIST]).toBeDefined();
    const docs = await get({}, "/docs");
    expect(docs.statusCode).toBeLessThan(400);
  });

  it("keeps the API key secret out of storage", async () => {
    const rows = await h.db.query<{ key_hash: string; lookup_id: string }>("SELECT key_hash, lookup_id FROM api_keys");
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const secretPart = orgA.api_key.slice(20);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(secretPart);
  });

  it("bootstraps a default tenant only over an empty database", async () => {
    expect(await h.tenancy.ensureDefaultTenant()).toBeNull();
  });
});
