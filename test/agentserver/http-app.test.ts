import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { runSlipway, spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * `slipway agent` on test/fixtures/http-project: a Hono `http.app` (routes, a shadowed
 * built-in route, middleware that refuses, changes requests and marks responses),
 * `http.configurable_headers` and a `ui` component, driven with the official SDK client
 * and plain fetch.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/http-project/langgraph.json", import.meta.url));

/** Opens a stream with on_disconnect "cancel", reads its first event, leaves: the run must end interrupted. */
async function leaveMidStream(apiUrl: string, headers: Record<string, string> = {}): Promise<void> {
  const client = new Client({ apiUrl, defaultHeaders: headers });
  const thread = await client.threads.create();
  const controller = new AbortController();
  const response = await fetch(`${apiUrl}/threads/${thread.thread_id}/runs/stream`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "slow", input: { steps: 50 }, on_disconnect: "cancel" }),
    signal: controller.signal,
  });
  const runId = response.headers.get("content-location")!.split("/").at(-1)!;
  await response.body!.getReader().read();
  controller.abort();
  let status = "";
  for (let i = 0; i < 200 && status !== "interrupted"; i++) {
    status = (await client.runs.get(thread.thread_id, runId)).status;
    if (status !== "interrupted") await new Promise((r) => setTimeout(r, 50));
  }
  expect(status).toBe("interrupted");
}

describe("langgraph.json http.app, configurable_headers and ui", () => {
  let agent: AgentProcess;
  let client: Client;
  beforeAll(async () => {
    agent = await spawnAgent(["--config", CONFIG, "--data-dir", freshBackend("pglite", "httpapp").dataDir!]);
    client = new Client({ apiUrl: agent.url, defaultHeaders: { "x-user-id": "user-7", "x-user-secret": "hidden", "x-other": "not listed" } });
  }, 90_000);
  afterAll(async () => {
    await agent?.kill();
  });

  it("serves the app's own routes, reading query and body", async () => {
    const hello = await fetch(`${agent.url}/hello?name=slipway`);
    expect(hello.status).toBe(200);
    expect(await hello.json()).toEqual({ hello: "slipway" });
    expect(hello.headers.get("x-served-by")).toBe("project-middleware");

    const echo = await fetch(`${agent.url}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ a: [1, 2] }) });
    expect(echo.status).toBe(201);
    expect(await echo.json()).toEqual({ received: { a: [1, 2] } });
  });

  it("lets an app route shadow a built-in one", async () => {
    expect(await (await fetch(`${agent.url}/ok`)).json()).toEqual({ ok: true, from: "project" });
  });

  it("runs the app's middleware around the built-in routes: SDK calls, streams and waits go through it", async () => {
    const thread = await client.threads.create({ metadata: { owner: "me" } });
    expect(thread.metadata).toMatchObject({ owner: "me" });

    const raw = await fetch(`${agent.url}/threads/${thread.thread_id}`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get("x-served-by")).toBe("project-middleware");

    const chunks = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "agent", { input: { text: "hi" }, streamMode: "values" })) chunks.push(chunk);
    expect(chunks.map((c) => c.event)).toEqual(["metadata", "values", "values"]);
    expect((chunks.at(-1)!.data as { text: string }).text).toBe("echo: hi");

    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { text: string }).text).toBe("echo: hi");

    // Middleware that read the body with c.req.json(): the built-in route still gets it.
    const inspected = await fetch(`${agent.url}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-inspect-body": "yes" },
      body: JSON.stringify({ metadata: { inspected: true } }),
    });
    expect(inspected.status).toBe(200);
    expect(inspected.headers.get("x-body-keys")).toBe("metadata");
    expect((await inspected.json()).metadata).toEqual({ inspected: true });

    const missing = await fetch(`${agent.url}/threads/00000000-0000-0000-0000-000000000000`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-served-by")).toBe("project-middleware");
  });

  it("passes a client's leaving on to the built-in route: on_disconnect cancel stops the run", async () => {
    await leaveMidStream(agent.url);
  });

  it("lets the middleware refuse a request before the built-in route sees it", async () => {
    const blocked = await fetch(`${agent.url}/threads`, { method: "POST", headers: { "content-type": "application/json", "x-block": "yes" }, body: "{}" });
    expect(blocked.status).toBe(418);
    expect(await blocked.json()).toEqual({ detail: "blocked by the project's middleware" });
    const threads = await client.threads.search({ metadata: { owner: "blocked" } });
    expect(threads).toEqual([]);
  });

  it("copies the headers http.configurable_headers names into the run's config, including one the middleware added", async () => {
    const result = (await client.runs.wait(null, "agent", { input: { text: "who" }, config: { configurable: { "x-user-id": "from-body" } } })) as {
      text: string;
      headers: Record<string, unknown>;
    };
    expect(result.text).toBe("echo: who");
    // Included: x-user-*; the header wins over the body. Excluded: x-user-secret. Not listed: x-other.
    expect(result.headers).toEqual({ "x-user-id": "user-7", "x-user-from-middleware": "added on the way in" });
  });

  it("serves the bundled ui components in the vendor's shape", async () => {
    const host = new URL(agent.url).host;
    const fragment = await fetch(`${agent.url}/ui/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      // As the SDK's LoadExternalComponent sends it: the name only.
      body: JSON.stringify({ name: "weather" }),
    });
    expect(fragment.status).toBe(200);
    expect(fragment.headers.get("content-type")).toContain("text/html");
    expect((await fragment.text()).split("\n")).toEqual([
      `<link rel="stylesheet" href="http://${host}/ui/agent/entrypoint.css" />`,
      `<script src="http://${host}/ui/agent/entrypoint.js" onload='__LGUI_agent.render("weather", "{{shadowRootId}}")'></script>`,
    ]);

    const script = await fetch(`http://${host}/ui/agent/entrypoint.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    const code = await script.text();
    expect(code).toMatch(/^var __LGUI_agent = /);
    expect(code).toContain('Symbol.for("LGUI_EXT_STORE")');
    expect(code).toContain("Weather in ");
    // Shared packages are left to the page.
    expect(code).toContain('__require("react/jsx-runtime")');
    expect(code).not.toContain("react.production");

    const css = await fetch(`http://${host}/ui/agent/entrypoint.css`);
    expect(css.headers.get("content-type")).toContain("text/css");
    expect(await css.text()).toContain(".weather-card");

    const unknown = await fetch(`${agent.url}/ui/nobody`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x" }),
    });
    expect(unknown.status).toBe(404);
    const invalid = await fetch(`${agent.url}/ui/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ shadowRootId: "r" }),
    });
    expect(invalid.status).toBe(422);
    expect(await invalid.text()).toContain("name");
  });
});

describe("a plain fetch handler under http.mount_prefix, behind --api-key", () => {
  let server: RunningAgentServer;
  let base: string;
  beforeAll(async () => {
    const target = freshBackend("pglite", "httpprefix");
    const config = fileURLToPath(new URL("../fixtures/http-project/langgraph.prefix.json", import.meta.url));
    server = await startAgentServer({ configPath: config, port: 0, dataDir: target.dataDir, schema: target.schema, apiKey: "secret", logLevel: "error" });
    base = server.url.replace(/\/api$/, "");
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  });
  const key = { "x-api-key": "secret" };

  it("serves everything under the prefix and nothing outside it", async () => {
    expect(server.url).toBe(`${base}/api`);
    expect((await fetch(`${base}/api/ok`)).status).toBe(200);
    expect((await fetch(`${base}/ok`)).status).toBe(404);
    expect((await fetch(`${base}/apiok`)).status).toBe(404);
    expect(await (await fetch(`${base}/api/ping`, { headers: key })).json()).toEqual({ pong: true, method: "GET" });
    const upload = await fetch(`${base}/api/upload`, { method: "POST", headers: key, body: "x".repeat(5000) });
    expect(await upload.json()).toEqual({ length: 5000 });
  });

  it("hands what the handler declines to the built-in routes: the SDK works at the prefixed URL, paths it is given carry the prefix", async () => {
    const client = new Client({ apiUrl: server.url, apiKey: "secret" });
    const thread = await client.threads.create();
    const chunks = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "agent", { input: { text: "under a prefix" } })) chunks.push(chunk);
    expect((chunks.at(-1)!.data as { text: string }).text).toBe("echo: under a prefix");

    const stream = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { ...key, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "agent", input: { text: "again" } }),
    });
    expect(stream.headers.get("content-location")).toMatch(new RegExp(`^/api/threads/${thread.thread_id}/runs/[0-9a-f-]+$`));
    await stream.text();
  });

  it("passes a client's leaving on to the built-in route: on_disconnect cancel stops the run", async () => {
    await leaveMidStream(server.url, key);
  });

  it("checks the API key and sets CORS headers on the handler's routes too; without configurable_headers a run gets the vendor's default headers, never the API key", async () => {
    const without = await fetch(`${base}/api/ping`, { headers: { origin: "https://ui.example" } });
    expect(without.status).toBe(401);
    expect(without.headers.get("access-control-allow-origin")).toBe("https://ui.example");
    expect((await fetch(`${base}/api/ping`, { headers: { "x-api-key": "wrong" } })).status).toBe(403);

    const allowed = await fetch(`${base}/api/ping`, { headers: { ...key, origin: "https://ui.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://ui.example");
    const foreign = await fetch(`${base}/api/ping`, { headers: { ...key, origin: "https://evil.example" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();

    const preflight = await fetch(`${base}/api/ping`, { method: "OPTIONS", headers: { origin: "https://ui.example", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);

    const result = (await new Client({ apiUrl: server.url, apiKey: "secret", defaultHeaders: { "x-user-id": "u" } }).runs.wait(null, "agent", {
      input: { text: "plain" },
    })) as { headers: Record<string, unknown> };
    // The vendor's JS server copies every x-* header but its credentials when nothing is configured.
    expect(result.headers).toEqual({ "x-user-id": "u" });
  });
});

describe("http.app behind auth.path", () => {
  let server: RunningAgentServer;
  beforeAll(async () => {
    const target = freshBackend("pglite", "httpauth");
    const config = fileURLToPath(new URL("../fixtures/http-project/langgraph.auth.json", import.meta.url));
    server = await startAgentServer({ configPath: config, port: 0, dataDir: target.dataDir, schema: target.schema, logLevel: "error" });
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  });

  it("authenticates the app's own routes as the built-in ones, with the handler's status and message", async () => {
    const none = await fetch(`${server.url}/ping`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ detail: "No token provided" });
    const expired = await fetch(`${server.url}/ping`, { headers: { authorization: "Bearer token-expired" } });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    const alice = { authorization: "Bearer token-alice" };
    expect(await (await fetch(`${server.url}/ping`, { headers: alice })).json()).toEqual({ pong: true, method: "GET" });
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
    // What the app declines reaches the built-in routes, whose own rules still apply.
    expect((await fetch(`${server.url}/threads/search`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).toBe(401);
    const thread = await new Client({ apiUrl: server.url, defaultHeaders: alice }).threads.create();
    expect(thread.metadata).toMatchObject({ owner: "alice" });
  });
});

describe("slipway agent --check imports http.app and bundles ui, as a start does", () => {
  const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/http-project/${name}`, import.meta.url));
  const check = (name: string) => runSlipway(["agent", "--check", "--config", fixture(name)]);

  it("passes a project whose app and components load", async () => {
    const run = await check("langgraph.json");
    expect(run.stdout).toBe('{"event":"check","ok":true,"graphs":["agent","slow"]}\n');
    expect(run.code).toBe(0);
  });

  it("fails on components that do not bundle, naming the file and line", async () => {
    const run = await check("langgraph.broken-ui.json");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`ui.agent: bundling ${fixture("src/broken-ui.jsx")} failed: `);
    expect(run.stderr).toMatch(/broken-ui\.jsx:3: Unexpected end of file before a closing "div" tag/);
  });

  it("fails on an http.app export that is neither a Hono app nor a fetch handler", async () => {
    const run = await check("langgraph.not-an-app.json");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`http.app: the export "graph" of ${fixture("src/graph.ts")} is neither a Hono app nor a fetch handler`);
  });
});
