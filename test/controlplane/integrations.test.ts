import { createServer, type IncomingMessage, type Server } from "node:http";
import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../src/auth/secret-box.ts";
import { buildControlPlaneApp } from "../../src/controlplane/app.ts";
import { IntegrationService } from "../../src/controlplane/integrations/service.ts";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { OWN_MODULES, as, json, openHarness, type Harness } from "./tenancy-harness.ts";

const INSTALL = "/v1/integrations/github/install";
const TOKEN = "gitea-token-0123456789";

/**
 * Stands in for a Gitea/Forgejo host: `GET /api/v1/user/repos` pages through three
 * repositories two at a time and insists on the integration's token.
 */
async function startForge(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const repos = [1, 2, 3].map((n) => ({
    id: 100 + n,
    name: `agent-${n}`,
    owner: { login: "team" },
    clone_url: `http://forge.test/team/agent-${n}.git`,
    default_branch: n === 2 ? "develop" : "main",
  }));
  const server: Server = createServer((request: IncomingMessage, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    seen.push(`${url.pathname} ${request.headers.authorization ?? ""}`);
    if (url.pathname !== "/api/v1/user/repos") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      response.writeHead(401, { "content-type": "application/json" }).end('{"message":"token is required"}');
      return;
    }
    const page = Number(url.searchParams.get("page") ?? 1);
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(repos.slice((page - 1) * 2, page * 2)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(BACKENDS)("integrations on %s", (backend) => {
  let h: Harness;
  let tenant: BootstrapResult;
  let forge: Awaited<ReturnType<typeof startForge>>;
  let headers: Record<string, string>;

  // The operator allows the forge on loopback, as `slipway up --allow-private-git-hosts 127.0.0.1` does.
  let strict: FastifyInstance;

  beforeAll(async () => {
    h = await openHarness(backend, { gitHosts: { allowHosts: ["127.0.0.1"] } });
    tenant = await h.tenancy.bootstrap({ orgName: "integrations" });
    headers = as(tenant.api_key, tenant.workspace_id);
    forge = await startForge();
    // The same control plane and database without that allow-list: the default.
    strict = await buildControlPlaneApp({
      deps: { ...h.deps, gitHosts: undefined },
      authenticator: h.authenticator,
      modules: OWN_MODULES,
      logLevel: "error",
    });
    await strict.ready();
  });
  afterAll(async () => {
    await strict?.close();
    await forge?.close();
    await h?.close();
  });

  const install = (payload: unknown, extra: Record<string, string> = {}) =>
    h.app.inject({ method: "POST", url: INSTALL, headers: { ...headers, ...extra }, payload: payload as object });
  const count = async () => (await h.db.query<{ n: number }>("SELECT count(*)::int AS n FROM integrations"))[0].n;

  it("registers a git host: 201 with the record, secrets sealed and never returned", async () => {
    const response = await install({ name: "forge", base_url: forge.url, token: TOKEN, webhook_secret: "hook-secret-xyz" });
    expect(response.statusCode).toBe(201);
    const body = json(response);
    expect(Object.keys(body).sort()).toEqual(["base_url", "created_at", "id", "installation_id", "name"]);
    expect(body).toMatchObject({ name: "forge", base_url: forge.url });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(body.installation_id)).toBe(true);
    expect(response.body).not.toContain(TOKEN);
    expect(response.body).not.toContain("hook-secret-xyz");

    const [row] = await h.db.query<{ token_sealed: string; webhook_secret_sealed: string }>(
      "SELECT token_sealed, webhook_secret_sealed FROM integrations WHERE id = $1",
      [body.id],
    );
    expect(row.token_sealed).not.toContain(TOKEN);
    expect(openSecret(h.deps.secretsKey, row.token_sealed, `integration:${body.id}:token`)).toBe(TOKEN);
    const credentials = await new IntegrationService(h.deps).credentials(tenant.workspace_id, body.id);
    expect(credentials).toMatchObject({ baseUrl: forge.url, token: TOKEN, webhookSecret: "hook-secret-xyz", provider: "git" });

    const listed = json(await h.app.inject({ method: "GET", url: INSTALL, headers }));
    expect(listed).toContainEqual(body);
    const mirrored = json(await h.app.inject({ method: "GET", url: `/api-host${INSTALL}`, headers }));
    expect(mirrored).toEqual(listed);
  });

  it("lists the repositories a forge exposes, page by page, sending the token", async () => {
    const created = json(await install({ name: "forge-list", base_url: forge.url, token: TOKEN }));
    const response = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${created.id}/repos`, headers });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual(
      [1, 2, 3].map((n) => ({
        host_integration_id: created.id,
        id: 100 + n,
        name: `agent-${n}`,
        owner: "team",
        url: `http://forge.test/team/agent-${n}.git`,
        default_branch: n === 2 ? "develop" : "main",
      })),
    );
    expect(forge.seen).toContain(`/api/v1/user/repos Bearer ${TOKEN}`);
  });

  it("answers an empty list for hosts without a listing API (git://, ssh://)", async () => {
    for (const [name, base_url] of [
      ["daemon", "git://127.0.0.1:9418/"],
      ["ssh", "ssh://git@git.example.test/"],
    ]) {
      const created = await install({ name, base_url });
      expect(created.statusCode).toBe(201);
      const repos = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${json(created).id}/repos`, headers });
      expect(repos.statusCode).toBe(200);
      expect(json(repos)).toEqual([]);
    }
  });

  it("reports a refused token as 400 and an unreachable host as 503", async () => {
    const refused = json(await install({ name: "forge-wrong-token", base_url: forge.url, token: "wrong" }));
    const r1 = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${refused.id}/repos`, headers });
    expect(r1.statusCode).toBe(400);
    expect(json(r1).detail).toMatch(/refused the integration's credentials \(HTTP 401\)/);
    expect(r1.body).not.toContain('wrong"');

    const gone = json(await install({ name: "gone", base_url: `http://127.0.0.1:${await closedPort()}/` }));
    const r2 = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${gone.id}/repos`, headers });
    expect(r2.statusCode).toBe(503);
    expect(json(r2).detail).toMatch(/unreachable/);
  });

  it("refuses loopback, private, link-local and metadata hosts in every spelling unless allowed (422, nothing stored or sent)", async () => {
    const before = await count();
    const seen = forge.seen.length;
    const port = new URL(forge.url).port;
    const refused: [string, RegExp][] = [
      [`http://127.0.0.1:${port}/`, /loopback/],
      [`http://[::1]:${port}/`, /loopback/],
      [`http://localhost:${port}/`, /host localhost \(address .*\) is refused: it is loopback/],
      [`http://2130706433:${port}/`, /loopback/],
      [`http://0x7f000001:${port}/`, /loopback/],
      [`http://[::ffff:127.0.0.1]:${port}/`, /IPv4-mapped address of 127\.0\.0\.1/],
      [`http://[::ffff:7f00:1]:${port}/`, /IPv4-mapped/],
      [`http://0.0.0.0:${port}/`, /this network/],
      [`http://127.0.0.2:${port}/`, /loopback/],
      ["http://169.254.169.254/", /metadata/],
      ["http://[::ffff:169.254.169.254]/", /metadata/],
      ["http://[64:ff9b::a9fe:a9fe]/", /NAT64.*metadata/],
      ["https://10.0.0.1/", /private/],
      ["https://[fd00::1]/", /unique-local/],
      ["http://[fec0::1]/", /site-local/],
      ["https://198.18.0.1/", /benchmarking/],
      ["git://192.168.1.10:9418/", /private/],
      ["ssh://git@172.16.0.1/", /private/],
    ];
    for (const [base_url, reason] of refused) {
      const response = await strict.inject({ method: "POST", url: INSTALL, headers, payload: { name: `ssrf-${base_url}`, base_url, token: TOKEN } });
      expect(response.statusCode, base_url).toBe(422);
      const [problem] = json(response).detail;
      expect(problem.loc, base_url).toEqual(["body", "base_url"]);
      expect(problem.msg, base_url).toMatch(reason);
      expect(problem.msg, base_url).toMatch(/--allow-private-git-hosts \(or SLIPWAY_GIT_ALLOW_HOSTS\)/);
    }
    expect(await count()).toBe(before);
    expect(forge.seen.length).toBe(seen);
  });

  it("checks the host again at every listing: a host no longer allowed gets no request and no token", async () => {
    const created = json(await install({ name: "forge-then-disallowed", base_url: forge.url, token: TOKEN }));
    const seen = forge.seen.length;
    const response = await strict.inject({ method: "GET", url: `/v1/integrations/github/${created.id}/repos`, headers });
    expect(response.statusCode).toBe(400);
    expect(json(response).detail).toMatch(/Listing the repositories of 127\.0\.0\.1:\d+ was refused: address 127\.0\.0\.1 is refused: it is loopback/);
    expect(response.body).not.toContain(TOKEN);
    expect(forge.seen.length).toBe(seen);
  });

  it("refuses a base_url that URL readers would read apart, by the repo_url rule (422 at base_url, nothing stored or sent)", async () => {
    const before = await count();
    const seen = forge.seen.length;
    const port = new URL(forge.url).port;
    const refused: [string, RegExp][] = [
      [`http://x.test\\@127.0.0.1:${port}/`, /base_url must not contain '\\'/],
      [`http://user@127.0.0.1:${port}/`, /base_url must not carry credentials or a user name/],
      [`https://git@x.test/`, /base_url must not carry credentials or a user name/],
      [`http://127.1:${port}/`, /base_url's host must spell the address as 127\.0\.0\.1/],
      [`http://127.0.0.1:${port}/%2e%2e/`, /base_url must not percent-encode ASCII characters/],
      [`http://127.0.0.1:0${port}/`, /base_url's port must be a number from 1 to 65535, without leading zeros/],
    ];
    for (const [base_url, reason] of refused) {
      const response = await install({ name: `canonical-${base_url}`, base_url, token: TOKEN });
      expect(response.statusCode, base_url).toBe(422);
      const [problem] = json(response).detail;
      expect(problem.loc, base_url).toEqual(["body", "base_url"]);
      expect(problem.msg, base_url).toMatch(reason);
    }
    expect(await count()).toBe(before);
    expect(forge.seen.length).toBe(seen);
    // The canonical spellings of the same hosts, an ssh account and a root without a slash still install.
    for (const base_url of [`HTTP://127.0.0.1:${port}`, "ssh://git@git.example.test", "https://x.test:443/gitlab/"]) {
      expect((await install({ name: `canonical-ok-${base_url}`, base_url })).statusCode, base_url).toBe(201);
    }
  });

  it("refuses a duplicate name with 409", async () => {
    expect((await install({ name: "twice", base_url: "https://git.example.test/" })).statusCode).toBe(201);
    const before = await count();
    const again = await install({ name: "twice", base_url: "https://other.example.test/" });
    expect(again.statusCode).toBe(409);
    expect(json(again).detail).toMatch(/already exists/);
    expect(await count()).toBe(before);
  });

  it("answers bad input with FastAPI-shaped 4xx and writes nothing", async () => {
    const before = await count();
    const cases: { payload: unknown; raw?: string; contentType?: string; status: number; loc?: (string | number)[]; type?: string }[] = [
      { payload: { base_url: "https://x.test/" }, status: 422, loc: ["body", "name"], type: "missing" },
      { payload: { name: 123, base_url: "https://x.test/" }, status: 422, loc: ["body", "name"] },
      { payload: { name: "n", base_url: "https://x.test/", token: 42 }, status: 422, loc: ["body", "token"] },
      { payload: { name: "n", base_url: "https://x.test/", admin: true }, status: 422, loc: ["body", "admin"], type: "extra_forbidden" },
      { payload: { name: "n", base_url: "ftp://x.test/" }, status: 422, loc: ["body", "base_url"], type: "url_parsing" },
      { payload: { name: "n", base_url: "not a url" }, status: 422, loc: ["body", "base_url"], type: "url_parsing" },
      { payload: { name: "n", base_url: "https://user:pw@x.test/" }, status: 422, loc: ["body", "base_url"] },
      { payload: { name: "", base_url: "https://x.test/" }, status: 422, loc: ["body", "name"] },
      { payload: ["name"], status: 422, loc: ["body"] },
      { payload: null, raw: '{"name": "n", "base_url": ', status: 422, loc: ["body"], type: "json_invalid" },
      { payload: null, raw: "name=n", contentType: "text/plain", status: 422, loc: ["body"] },
      { payload: null, raw: "<name>n</name>", contentType: "application/xml", status: 415 },
      { payload: null, raw: JSON.stringify({ name: "n", base_url: "https://x.test/", token: "x".repeat(1_100_000) }), status: 413 },
    ];
    for (const c of cases) {
      const response = await h.app.inject({
        method: "POST",
        url: INSTALL,
        headers: { ...headers, "content-type": c.contentType ?? "application/json" },
        payload: c.raw ?? JSON.stringify(c.payload),
      });
      const label = c.raw?.slice(0, 40) ?? JSON.stringify(c.payload);
      expect(response.statusCode, label).toBe(c.status);
      const body = json(response);
      if (c.status === 422) {
        expect(Array.isArray(body.detail), label).toBe(true);
        for (const problem of body.detail) expect(Object.keys(problem).sort()).toEqual(["loc", "msg", "type"]);
        expect(body.detail[0].loc, label).toEqual(c.loc);
        if (c.type) expect(body.detail[0].type, label).toBe(c.type);
      } else {
        expect(typeof body.detail, label).toBe("string");
      }
    }
    expect(await count()).toBe(before);
  });

  it("validates ids in the path (422) and answers 404 for unknown ones", async () => {
    for (const bad of ["not-a-uuid", "urn:uuid:6ba7b821-9dad-11d1-80b4-00c04fd430c8", "1"]) {
      const response = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${bad}/repos`, headers });
      expect(response.statusCode, bad).toBe(422);
      expect(json(response).detail[0].loc).toEqual(["path", "integration_id"]);
    }
    const missing = randomUUID();
    const response = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${missing}/repos`, headers });
    expect(response.statusCode).toBe(404);
    expect(json(response)).toEqual({ detail: `Integration '${missing}' not found` });
  });

  it("deletes an integration (204), after which it is 404", async () => {
    const created = json(await install({ name: "short-lived", base_url: "https://git.example.test/" }));
    const url = `/v1/integrations/github/${created.id}`;
    expect((await h.app.inject({ method: "DELETE", url, headers })).statusCode).toBe(204);
    expect((await h.app.inject({ method: "DELETE", url, headers })).statusCode).toBe(404);
    expect((await h.app.inject({ method: "GET", url: `${url}/repos`, headers })).statusCode).toBe(404);
  });

  it("has no Forge integrations on a self-hosted install", async () => {
    const list = await h.app.inject({ method: "GET", url: "/v1/integrations/forge/github/install", headers });
    expect(list.statusCode).toBe(200);
    expect(json(list)).toEqual([]);
    const repos = await h.app.inject({ method: "GET", url: `/v1/integrations/forge/github/${randomUUID()}/repos`, headers });
    expect(repos.statusCode).toBe(404);
  });
});
