import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../src/auth/secret-box.ts";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { as, json, openHarness, type Harness } from "./tenancy-harness.ts";

const PROVIDERS = "/v2/auth/providers";

function provider(overrides: Record<string, unknown> = {}) {
  return {
    provider_id: `github-${randomUUID().slice(0, 8)}`,
    name: "GitHub",
    client_id: "client-123",
    client_secret: "client-secret-shh",
    auth_url: "https://github.com/login/oauth/authorize",
    token_url: "https://github.com/login/oauth/access_token",
    ...overrides,
  };
}

describe.each(BACKENDS)("auth service (OAuth providers) on %s", (backend) => {
  let h: Harness;
  let tenant: BootstrapResult;
  let headers: Record<string, string>;

  beforeAll(async () => {
    h = await openHarness(backend);
    tenant = await h.tenancy.bootstrap({ orgName: "auth" });
    headers = as(tenant.api_key, tenant.workspace_id);
  });
  afterAll(() => h?.close());

  const send = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: unknown) =>
    h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const count = async () => (await h.db.query<{ n: number }>("SELECT count(*)::int AS n FROM oauth_providers"))[0].n;

  it("creates a provider (200) with the vendor's defaults and without the secret", async () => {
    const request = provider();
    const response = await send("POST", PROVIDERS, request);
    expect(response.statusCode).toBe(200);
    const body = json(response);
    expect(body).toMatchObject({
      organization_id: tenant.organization_id,
      provider_id: request.provider_id,
      name: "GitHub",
      client_id: "client-123",
      uses_pkce: false,
      code_challenge_method: "S256",
      provider_type: null,
      mcp_server_url: null,
      token_endpoint_auth_method: "client_secret_post",
      is_dynamic_client: false,
    });
    expect(body).not.toHaveProperty("client_secret");
    expect(response.body).not.toContain("client-secret-shh");
    const [row] = await h.db.query<{ client_secret_sealed: string }>("SELECT client_secret_sealed FROM oauth_providers WHERE id = $1", [body.id]);
    expect(row.client_secret_sealed).not.toContain("shh");
    expect(openSecret(h.deps.secretsKey, row.client_secret_sealed, `oauth-provider:${body.id}:client_secret`)).toBe("client-secret-shh");
  });

  it("lists, reads by provider_id or id, updates and deletes", async () => {
    const created = json(await send("POST", PROVIDERS, provider({ provider_type: "slack", uses_pkce: true, token_endpoint_auth_method: "none" })));
    expect(json(await send("GET", PROVIDERS)).map((p: { id: string }) => p.id)).toContain(created.id);
    expect(json(await send("GET", `${PROVIDERS}/${created.provider_id}`))).toEqual(created);
    expect(json(await send("GET", `${PROVIDERS}/${created.id}`))).toEqual(created);
    expect(json(await send("GET", `/api-host${PROVIDERS}/${created.provider_id}`))).toEqual(created);

    const patched = await send("PATCH", `${PROVIDERS}/${created.provider_id}`, { name: "Slack", client_id: null, code_challenge_method: "plain" });
    expect(patched.statusCode).toBe(200);
    expect(json(patched)).toMatchObject({ name: "Slack", client_id: created.client_id, code_challenge_method: "plain", uses_pkce: true });
    expect(new Date(json(patched).updated_at).getTime()).toBeGreaterThanOrEqual(new Date(created.updated_at).getTime());

    const deleted = await send("DELETE", `${PROVIDERS}/${created.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(json(deleted)).toEqual({ id: created.id, provider_id: created.provider_id, deleted: true });
    expect((await send("GET", `${PROVIDERS}/${created.provider_id}`)).statusCode).toBe(404);
    expect((await send("DELETE", `${PROVIDERS}/${created.provider_id}`)).statusCode).toBe(404);
  });

  it("refuses a duplicate provider_id with 409", async () => {
    const request = provider();
    expect((await send("POST", PROVIDERS, request)).statusCode).toBe(200);
    const before = await count();
    const again = await send("POST", PROVIDERS, { ...request, name: "Other" });
    expect(again.statusCode).toBe(409);
    expect(json(again).detail).toContain(request.provider_id);
    expect(await count()).toBe(before);
  });

  it("answers bad input with 422 naming the field, and writes nothing", async () => {
    const before = await count();
    const cases: [unknown, (string | number)[]][] = [
      [provider({ provider_type: "github" }), ["body", "provider_type"]],
      [provider({ token_endpoint_auth_method: "private_key_jwt" }), ["body", "token_endpoint_auth_method"]],
      [provider({ code_challenge_method: "S512" }), ["body", "code_challenge_method"]],
      [provider({ uses_pkce: "yes" }), ["body", "uses_pkce"]],
      [provider({ client_id: 7 }), ["body", "client_id"]],
      [provider({ auth_url: "javascript:alert(1)" }), ["body", "auth_url"]],
      [provider({ provider_id: "has/slash" }), ["body", "provider_id"]],
      [provider({ extra: 1 }), ["body", "extra"]],
      [{ ...provider(), client_id: undefined }, ["body", "client_id"]],
    ];
    for (const [payload, loc] of cases) {
      const response = await send("POST", PROVIDERS, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      const detail = json(response).detail;
      expect(detail).toHaveLength(1);
      expect(detail[0].loc).toEqual(loc);
    }
    const enumError = json(await send("POST", PROVIDERS, provider({ provider_type: "github" }))).detail[0];
    expect(enumError).toMatchObject({ type: "enum", msg: expect.stringContaining("'microsoft'") });
    expect(await count()).toBe(before);

    const existing = json(await send("POST", PROVIDERS, provider()));
    const badPatch = await send("PATCH", `${PROVIDERS}/${existing.provider_id}`, { uses_pkce: "maybe" });
    expect(badPatch.statusCode).toBe(422);
    expect(json(badPatch).detail[0].loc).toEqual(["body", "uses_pkce"]);
    expect(json(await send("GET", `${PROVIDERS}/${existing.provider_id}`)).uses_pkce).toBe(false);
  });
});
