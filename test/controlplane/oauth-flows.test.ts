import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../src/auth/secret-box.ts";
import { buildControlPlaneApp } from "../../src/controlplane/app.ts";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { startOidcProvider, type OidcFixture } from "../support/oidc-provider.ts";
import { OWN_MODULES, as, json, openHarness, type Harness } from "./tenancy-harness.ts";

/**
 * The auth service's OAuth flows end to end against a real OpenID provider (`oidc-provider`)
 * on loopback: authorization code with PKCE, the provider's redirect to the callback,
 * wait, refresh after expiry, MCP discovery with dynamic registration, revocation on
 * delete, agent connections, and the refusals (forged state, replayed code, another
 * workspace, a provider on a private address without the operator's allowance).
 */
const PUBLIC_URL = "http://127.0.0.1:0"; // the harness's publicUrl: callbacks are built on it
const callbackOf = (providerId: string) => `${PUBLIC_URL}/v2/auth/callback/${providerId}`;
const ACCESS_TOKEN_TTL = 2;

let oidc: OidcFixture;
beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [callbackOf("oidc"), callbackOf("slack")], accessTokenTtl: ACCESS_TOKEN_TTL });
});
afterAll(() => oidc?.close());

describe.each(BACKENDS)("OAuth flows against a loopback OpenID provider on %s", (backend) => {
  let h: Harness;
  /** The same control plane without the loopback allowance: the default. */
  let strict: FastifyInstance;
  let a: BootstrapResult;
  let b: BootstrapResult;
  let firstToken: string;

  beforeAll(async () => {
    // The operator allows the provider on loopback, as `slipway up --allow-private-git-hosts 127.0.0.1` does.
    h = await openHarness(backend, { gitHosts: { allowHosts: ["127.0.0.1"] } });
    strict = await buildControlPlaneApp({ deps: { ...h.deps, gitHosts: undefined }, authenticator: h.authenticator, modules: OWN_MODULES, logLevel: "error" });
    await strict.ready();
    a = await h.tenancy.bootstrap({ orgName: "oauth-a" });
    b = await h.tenancy.bootstrap({ orgName: "oauth-b" });
    for (const tenant of [a, b]) {
      const created = await call(tenant, "POST", "/v2/auth/providers", {
        provider_id: "oidc",
        name: "Loopback OpenID",
        client_id: oidc.client.id,
        client_secret: oidc.client.secret,
        auth_url: `${oidc.issuer}/auth`,
        token_url: `${oidc.issuer}/token`,
        uses_pkce: true,
      });
      expect(created.statusCode, created.body).toBe(200);
    }
  });
  afterAll(async () => {
    await strict?.close();
    await h?.close();
  });

  const call = (tenant: BootstrapResult, method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object, app?: FastifyInstance) =>
    (app ?? h.app).inject({ method, url, headers: as(tenant.api_key, tenant.workspace_id), ...(payload ? { payload } : {}) });
  const authenticate = (tenant: BootstrapResult, body: object, app?: FastifyInstance) => call(tenant, "POST", "/v2/auth/authenticate", body, app);
  const count = async (table: string) => (await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  const tokens = () => count("oauth_tokens");
  /** The provider's redirect back to Slipway, as a path the app is asked for (the browser's step). */
  const consent = async (url: string, providerId = "oidc") => {
    const back = await oidc.authorize(url, callbackOf(providerId));
    return { path: `${back.pathname}${back.search}`, code: back.searchParams.get("code")!, state: back.searchParams.get("state")! };
  };
  const followCallback = (path: string, app?: FastifyInstance) => (app ?? h.app).inject({ method: "GET", url: path });

  it("runs the authorization-code flow with PKCE: authenticate, consent at the provider, callback, wait", async () => {
    const started = await authenticate(a, { provider: "oidc", scopes: ["openid", "email"] });
    expect(started.statusCode, started.body).toBe(200);
    const pending = json(started);
    expect(pending).toMatchObject({ status: "pending", auth_id: expect.any(String) });
    const url = new URL(pending.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${oidc.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: oidc.client.id,
      redirect_uri: callbackOf("oidc"),
      scope: "email openid",
      code_challenge_method: "S256",
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(json(await call(a, "GET", `/v2/auth/wait/${pending.auth_id}?timeout=0`))).toEqual({ status: "pending" });

    const waiting = call(a, "GET", `/v2/auth/wait/${pending.auth_id}?timeout=20`);
    const back = await consent(pending.url);
    const done = await followCallback(back.path);
    expect(done.statusCode, done.body).toBe(200);
    expect(json(done)).toMatchObject({ status: "completed", auth_id: pending.auth_id, provider_id: "oidc" });
    const waited = json(await waiting);
    expect(waited).toEqual({ status: "completed", token: expect.any(String) });
    firstToken = waited.token;
    expect(await oidc.active(firstToken)).toBe(true);

    // Sealed at rest; the summaries never carry it.
    const [row] = await h.db.query<{ access_token_sealed: string; refresh_token_sealed: string | null }>(
      "SELECT access_token_sealed, refresh_token_sealed FROM oauth_tokens",
    );
    expect(row.access_token_sealed).not.toContain(firstToken);
    expect(row.refresh_token_sealed).not.toBeNull();
    const listed = await call(a, "GET", "/v2/auth/tokens?provider_id=oidc");
    expect(listed.body).not.toContain(firstToken);
    expect(json(listed)).toEqual([
      expect.objectContaining({ provider_id: "oidc", provider_account_label: "alice", scopes: ["email", "openid"], is_default: true }),
    ]);

    // The token exists now: authenticate hands it back without a new flow.
    const again = json(await authenticate(a, { provider: "oidc", scopes: ["openid"] }));
    expect(again).toMatchObject({ status: "completed", token: expect.any(String), user_id: a.api_key_id });
    expect(await oidc.active(again.token)).toBe(true);

    // The same redirect again: its state is spent.
    const before = await tokens();
    const replay = await followCallback(back.path);
    expect(replay.statusCode).toBe(400);
    expect(json(replay).detail).toMatch(/no pending authorization .* matches this state/);
    expect(await tokens()).toBe(before);
  });

  it("refreshes a token that has expired (refresh_token grant) before handing it out", async () => {
    const [summary] = json(await call(a, "GET", "/v2/auth/tokens?provider_id=oidc"));
    const expiresAt = new Date(summary.expires_at).getTime();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 200)));
    expect(await oidc.active(firstToken)).toBe(false);

    const refreshed = json(await authenticate(a, { provider: "oidc", scopes: ["openid", "email"] }));
    expect(refreshed.status).toBe("completed");
    expect(refreshed.token).not.toBe(firstToken);
    expect(await oidc.active(refreshed.token)).toBe(true);
    const [after] = json(await call(a, "GET", "/v2/auth/tokens?provider_id=oidc"));
    expect(after.id).toBe(summary.id);
    expect(new Date(after.expires_at).getTime()).toBeGreaterThan(expiresAt);
  });

  it("refuses a forged state, a flow of another workspace and a replayed code, storing nothing", async () => {
    const before = await tokens();
    const forged = await followCallback(`/v2/auth/callback/oidc?code=made-up&state=${"x".repeat(43)}`);
    expect(forged.statusCode).toBe(400);
    expect(await tokens()).toBe(before);

    // Workspace B relays workspace A's redirect: refused, and A's flow is left untouched.
    const started = json(await authenticate(a, { provider: "oidc", scopes: ["openid"], force_new: true }));
    const back = await consent(started.url);
    const crossed = await call(b, "POST", "/v2/auth/callback/oidc", { code: back.code, state: back.state });
    expect(crossed.statusCode).toBe(400);
    expect(await tokens()).toBe(before);
    const finished = await call(a, "POST", "/v2/auth/callback/oidc", { code: back.code, state: back.state });
    expect(finished.statusCode, finished.body).toBe(200);
    expect(await tokens()).toBe(before + 1);

    // A new flow's state with the code already spent: the provider refuses it.
    const next = json(await authenticate(a, { provider: "oidc", scopes: ["openid"], force_new: true }));
    const nextState = new URL(next.url).searchParams.get("state")!;
    const replayed = await followCallback(`/v2/auth/callback/oidc?code=${encodeURIComponent(back.code)}&state=${encodeURIComponent(nextState)}`);
    expect(replayed.statusCode).toBe(400);
    expect(json(replayed).detail).toMatch(/refused the authorization_code grant .*invalid_grant/);
    expect(await tokens()).toBe(before + 1);
    expect(json(await call(a, "GET", `/v2/auth/wait/${next.auth_id}?timeout=0`))).toEqual({ status: "not_found" });
  });

  it("refuses a provider on a private address without the operator's allowance, storing nothing", async () => {
    const providers = await count("oauth_providers");
    const manual = await call(
      a,
      "POST",
      "/v2/auth/providers",
      {
        provider_id: "private",
        name: "Private",
        client_id: "c",
        auth_url: `${oidc.issuer}/auth`,
        token_url: `${oidc.issuer}/token`,
      },
      strict,
    );
    expect(manual.statusCode).toBe(422);
    expect(json(manual).detail[0]).toMatchObject({ loc: ["body", "token_url"], msg: expect.stringMatching(/loopback.*--allow-private-git-hosts/) });
    const discovered = await call(
      a,
      "POST",
      "/v2/auth/providers/mcp-discover",
      { provider_id: "private-mcp", name: "MCP", mcp_server_url: oidc.mcpUrl },
      strict,
    );
    expect(discovered.statusCode).toBe(422);
    expect(json(discovered).detail[0].loc).toEqual(["body", "mcp_server_url"]);
    expect(await count("oauth_providers")).toBe(providers);

    // A flow of a provider allowed earlier: without the allowance, the token exchange is refused.
    const before = await tokens();
    const started = json(await authenticate(a, { provider: "oidc", scopes: ["openid"], force_new: true }, strict));
    const back = await consent(started.url);
    const exchanged = await followCallback(back.path, strict);
    expect(exchanged.statusCode).toBe(400);
    expect(json(exchanged).detail).toMatch(/refused: .*loopback/);
    expect(await tokens()).toBe(before);
  });

  it("connects an agent to a user's token: connection_required, then the token", async () => {
    const needs = json(await authenticate(a, { provider: "oidc", scopes: ["openid"], agent_id: "agent-1" }));
    expect(needs).toMatchObject({ status: "connection_required", metadata: { provider_id: "oidc", agent_id: "agent-1", oauth_token_id: expect.any(String) } });
    expect(needs.token ?? null).toBeNull();
    const tokenId = needs.metadata.oauth_token_id;

    expect((await call(b, "POST", "/v2/auth/agents/agent-1/connections", { oauth_token_id: tokenId })).statusCode).toBe(404);
    const bad = await call(a, "POST", "/v2/auth/agents/agent-1/connections", { oauth_token_id: "not-a-uuid" });
    expect(bad.statusCode).toBe(422);
    expect(json(bad).detail[0].loc).toEqual(["body", "oauth_token_id"]);

    const created = await call(a, "POST", "/v2/auth/agents/agent-1/connections", { oauth_token_id: tokenId });
    expect(created.statusCode, created.body).toBe(201);
    const connection = json(created);
    expect(connection).toMatchObject({ agent_id: "agent-1", oauth_token_id: tokenId, provider_id: "oidc", created_by: expect.any(String) });
    expect((await call(a, "POST", "/v2/auth/agents/agent-1/connections", { oauth_token_id: tokenId })).statusCode).toBe(409);
    expect(json(await call(a, "GET", "/v2/auth/agents/agent-1/connections")).data).toEqual([connection]);
    expect(json(await call(b, "GET", "/v2/auth/agents/agent-1/connections")).data).toEqual([]);

    const granted = json(await authenticate(a, { provider: "oidc", scopes: ["openid"], agent_id: "agent-1" }));
    expect(granted).toMatchObject({ status: "completed", metadata: { token_id: tokenId } });
    expect(await oidc.active(granted.token)).toBe(true);

    expect((await call(a, "DELETE", `/v2/auth/agents/agent-1/connections/${connection.id}`)).statusCode).toBe(204);
    expect((await call(a, "DELETE", `/v2/auth/agents/agent-1/connections/${connection.id}`)).statusCode).toBe(404);
    expect(json(await call(a, "GET", "/v2/auth/agents/agent-1/connections")).data).toEqual([]);
  });

  it("makes a provider from an MCP server's metadata, runs its flow, and revokes at the provider on delete", async () => {
    const response = await call(a, "POST", "/v2/auth/providers/mcp-discover", { provider_id: "oidc-mcp", name: "Loopback MCP", mcp_server_url: oidc.mcpUrl });
    expect(response.statusCode, response.body).toBe(200);
    const provider = json(response);
    expect(provider).toMatchObject({
      provider_id: "oidc-mcp",
      auth_url: `${oidc.issuer}/auth`,
      token_url: `${oidc.issuer}/token`,
      uses_pkce: true,
      code_challenge_method: "S256",
      mcp_server_url: oidc.mcpUrl,
      is_dynamic_client: true,
    });
    expect((await call(a, "POST", "/v2/auth/providers/mcp-discover", { provider_id: "oidc-mcp", name: "Again", mcp_server_url: oidc.mcpUrl })).statusCode).toBe(
      409,
    );

    const started = json(await authenticate(a, { provider: "oidc-mcp", scopes: ["mcp:tools"] }));
    expect(new URL(started.url).searchParams.get("resource")).toBe(oidc.mcpUrl);
    const back = await consent(started.url, "oidc-mcp");
    expect((await followCallback(back.path)).statusCode).toBe(200);
    const { token } = json(await call(a, "GET", `/v2/auth/wait/${started.auth_id}?timeout=5`));

    // Introspected as the client Slipway registered for itself.
    const [row] = await h.db.query<{ id: string; client_id: string; client_secret_sealed: string }>(
      "SELECT id, client_id, client_secret_sealed FROM oauth_providers WHERE id = $1",
      [provider.id],
    );
    const registered = { id: row.client_id, secret: openSecret(h.deps.secretsKey, row.client_secret_sealed, `oauth-provider:${row.id}:client_secret`) };
    expect(await oidc.active(token, registered)).toBe(true);

    const [summary] = json(await call(a, "GET", "/v2/auth/tokens?provider_id=oidc-mcp"));
    expect((await call(b, "DELETE", `/v2/auth/tokens/${summary.id}`)).statusCode).toBe(404);
    expect((await call(a, "DELETE", `/v2/auth/tokens/${summary.id}`)).statusCode).toBe(204);
    expect(await oidc.active(token, registered)).toBe(false);
    expect(json(await call(a, "GET", "/v2/auth/tokens/exists?provider_id=oidc-mcp"))).toEqual({ has_token: false });
  });

  it("lists, labels and deletes a user's tokens; answers Slack's pair for a workspace without Slack", async () => {
    expect(json(await call(a, "GET", "/v2/auth/tokens/exists?provider_id=oidc"))).toEqual({ has_token: true });
    expect(json(await call(b, "GET", "/v2/auth/tokens/exists?provider_id=oidc"))).toEqual({ has_token: false });
    const [first] = json(await call(a, "GET", "/v2/auth/tokens"));
    const labelled = await call(a, "PATCH", `/v2/auth/tokens/${first.id}/metadata`, { provider_account_label: "work account" });
    expect(labelled.statusCode).toBe(200);
    expect(json(labelled)).toMatchObject({ id: first.id, provider_account_label: "work account" });
    expect((await call(b, "PATCH", `/v2/auth/tokens/${first.id}/metadata`, { provider_account_label: "mine" })).statusCode).toBe(404);

    expect(json(await call(a, "GET", "/v2/auth/tokens/workspace/slack/exists"))).toEqual({ has_token: false });
    expect(json(await call(a, "DELETE", "/v2/auth/tokens/workspace/slack"))).toMatchObject({ deleted: 0 });

    const held = (await call(a, "GET", "/v2/auth/tokens?provider_id=oidc")).json().length;
    expect(held).toBeGreaterThan(0);
    const revoked = await call(a, "DELETE", "/v2/auth/tokens?provider_id=oidc");
    expect(revoked.statusCode).toBe(200);
    expect(json(revoked)).toMatchObject({ message: "Tokens revoked", provider_id: "oidc", deleted: held });
    expect(json(await call(a, "GET", "/v2/auth/tokens?provider_id=oidc"))).toEqual([]);
  });

  it("revokes a workspace's Slack tokens at Slack (faked on loopback: Slack cannot run here), keeping them while Slack fails", async () => {
    const answers = [
      { ok: false, error: "ratelimited" },
      { ok: true, revoked: true },
    ];
    const seen: string[] = [];
    const slack = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(answers.shift()));
    });
    await new Promise<void>((resolve) => slack.listen(0, "127.0.0.1", resolve));
    try {
      const created = await call(b, "POST", "/v2/auth/providers", {
        provider_id: "slack",
        name: "Slack",
        provider_type: "slack",
        client_id: oidc.client.id,
        client_secret: oidc.client.secret,
        auth_url: `${oidc.issuer}/auth`,
        token_url: `${oidc.issuer}/token`,
      });
      expect(created.statusCode, created.body).toBe(200);
      // Slack's auth.revoke, here on loopback.
      await h.db.query("UPDATE oauth_providers SET revocation_url = $1 WHERE id = $2", [
        `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/auth.revoke`,
        json(created).id,
      ]);
      const started = json(await authenticate(b, { provider: "slack", scopes: ["openid"] }));
      expect((await followCallback((await consent(started.url, "slack")).path)).statusCode).toBe(200);
      const { token } = json(await call(b, "GET", `/v2/auth/wait/${started.auth_id}?timeout=5`));
      expect(json(await call(b, "GET", "/v2/auth/tokens/workspace/slack/exists"))).toEqual({ has_token: true });

      const failed = await call(b, "DELETE", "/v2/auth/tokens/workspace/slack");
      expect(failed.statusCode).toBe(503);
      expect(json(failed).detail).toMatch(/1 of 1 Slack tokens could not be revoked .*ratelimited/);
      expect(json(await call(b, "GET", "/v2/auth/tokens/workspace/slack/exists"))).toEqual({ has_token: true });

      const revoked = await call(b, "DELETE", "/v2/auth/tokens/workspace/slack");
      expect(revoked.statusCode).toBe(200);
      expect(json(revoked)).toMatchObject({ deleted: 1, revoked_at_provider: 1 });
      expect(seen).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
      expect(json(await call(b, "GET", "/v2/auth/tokens/workspace/slack/exists"))).toEqual({ has_token: false });
    } finally {
      await new Promise<void>((resolve) => slack.close(() => resolve()));
    }
  });

  it("answers bad input with a clear error and changes nothing", async () => {
    const before = await count("oauth_auth_requests");
    const cases: [object, (string | number)[]][] = [
      [{ provider: "oidc" }, ["body", "scopes"]],
      [{ provider: "oidc", scopes: ["has space"] }, ["body", "scopes", 0]],
      [{ provider: "oidc", scopes: [], token_id: "nope" }, ["body", "token_id"]],
      [{ provider: "oidc", scopes: [], use_agent_builder_public_oauth: true }, ["body", "use_agent_builder_public_oauth"]],
    ];
    for (const [body, loc] of cases) {
      const response: LightMyRequestResponse = await authenticate(a, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(json(response).detail[0].loc).toEqual(loc);
    }
    expect((await authenticate(a, { provider: "nowhere", scopes: [] })).statusCode).toBe(404);
    const tooLong = await call(a, "GET", "/v2/auth/wait/00000000-0000-4000-8000-000000000000?timeout=301");
    expect(tooLong.statusCode).toBe(422);
    expect(json(tooLong).detail[0].loc).toEqual(["query", "timeout"]);
    expect(json(await call(a, "GET", "/v2/auth/wait/00000000-0000-4000-8000-000000000000?timeout=0"))).toEqual({ status: "not_found" });
    expect((await h.app.inject({ method: "GET", url: "/v2/auth/callback/oidc?state=abc" })).statusCode).toBe(422);
    const denied = await h.app.inject({ method: "GET", url: "/v2/auth/callback/oidc?error=access_denied&error_description=no&state=abc" });
    expect(denied.statusCode).toBe(400);
    expect(json(denied).detail).toContain("access_denied");
    // A GitHub App's setup redirect: an update needs no exchange; an installation's code and state are a callback's.
    const updated = await h.app.inject({ method: "GET", url: "/v2/auth/setup/oidc?setup_action=update&installation_id=7" });
    expect(updated.statusCode).toBe(200);
    expect(json(updated)).toMatchObject({ status: "updated", provider_id: "oidc" });
    expect((await h.app.inject({ method: "GET", url: "/v2/auth/setup/oidc?setup_action=install&code=c&state=forged" })).statusCode).toBe(400);
    expect((await h.app.inject({ method: "GET", url: "/v2/auth/setup/oidc?installation_id=seven" })).statusCode).toBe(422);
    expect((await h.app.inject({ method: "GET", url: "/v2/auth/tokens" })).statusCode).toBe(401);
    expect(await count("oauth_auth_requests")).toBe(before);
  });
});
