import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { readLanggraphConfig } from "../../src/agentserver/graphs/langgraph-config.ts";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";

/** langgraph.json's `http` section (CORS, route groups) and the keys refused at start. */
const GRAPHS = fileURLToPath(new URL("../fixtures/agents/src/graphs.ts", import.meta.url));

function configFile(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-lgconfig-"));
  const file = join(dir, "langgraph.json");
  writeFileSync(file, JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, ...extra }));
  return file;
}

describe("langgraph.json http settings", () => {
  const servers: RunningAgentServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function serve(extra: Record<string, unknown>, apiKey?: string): Promise<RunningAgentServer> {
    const target = freshBackend("pglite", "cors");
    const server = await startAgentServer({
      configPath: configFile(extra),
      port: 0,
      dataDir: target.dataDir,
      schema: target.schema,
      apiKey,
      logLevel: "error",
    });
    servers.push(server);
    return server;
  }

  it("lets any origin in by default: preflights answered before the key check, streams carry the headers", async () => {
    const server = await serve({}, "secret");
    const preflight = await fetch(`${server.url}/threads/search`, {
      method: "OPTIONS",
      headers: { origin: "https://studio.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-api-key" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, x-api-key");

    const client = new Client({ apiUrl: server.url, apiKey: "secret", defaultHeaders: { origin: "https://studio.example" } });
    const thread = await client.threads.create();
    const stream = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { origin: "https://studio.example", "content-type": "application/json", "x-api-key": "secret" },
      body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "human", content: "hi" }] } }),
    });
    expect(stream.headers.get("access-control-allow-origin")).toBe("*");
    expect(stream.headers.get("access-control-expose-headers")).toContain("Content-Location");
    await stream.text();

    const plain = await fetch(`${server.url}/threads/${thread.thread_id}`, { headers: { origin: "https://other.example", "x-api-key": "secret" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("follows http.cors: listed origins only, credentials, max_age", async () => {
    const server = await serve({
      http: { cors: { allow_origins: ["https://studio.example"], allow_credentials: true, max_age: 600, expose_headers: ["X-Trace"] } },
    });
    const allowed = await fetch(`${server.url}/assistants/search`, {
      method: "OPTIONS",
      headers: { origin: "https://studio.example", "access-control-request-method": "POST" },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://studio.example");
    expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
    expect(allowed.headers.get("access-control-max-age")).toBe("600");
    expect(allowed.headers.get("vary")).toContain("Origin");

    const foreign = await fetch(`${server.url}/ok`, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    const listed = await fetch(`${server.url}/ok`, { headers: { origin: "https://studio.example" } });
    expect(listed.headers.get("access-control-expose-headers")).toContain("X-Trace");
  });

  it("turns route groups off with http.disable_<group>", async () => {
    const server = await serve({ http: { disable_store: true, disable_mcp: true } });
    const store = await fetch(`${server.url}/store/items?namespace=a&key=b`);
    expect(store.status).toBe(404);
    const threads = await fetch(`${server.url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(threads.status).toBe(200);
  });

  it("refuses settings it cannot honour yet, naming the key", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ http: { app: 42 } }, 'http.app: must be "./path/to/file.ts:export"'],
      [{ http: { mount_prefix: "api" } }, 'http.mount_prefix: must be a path such as "/api"'],
      [{ http: { configurable_headers: { includes: "x-*" } } }, "http.configurable_headers.includes: must be a list of header names"],
      [{ http: { configurable_headers: { only: ["x-a"] } } }, "http.configurable_headers.only: unknown setting"],
      [{ ui: { agent: "./ui.tsx:named" } }, "ui.agent: names a file; its default export maps component names to components"],
      [{ ui_config: { shared: "react" }, ui: { agent: "./ui.tsx" } }, "ui_config.shared: must be a list of strings"],
      [{ auth: { path: "./auth.ts:auth", bogus: true } }, "auth.bogus: unknown setting"],
      [{ auth: { path: 42 } }, "auth.path: must be"],
      [{ auth: { path: "./auth.py" } }, 'auth.path: must name the Auth object of the Python module: "./auth.py:auth"'],
      [{ http: { cors: { allow_origins: "*" } } }, "http.cors: allow_origins: must be a list of strings"],
      [{ http: { cors: { allow_origin: ["*"] } } }, "http.cors: allow_origin: unknown field"],
      [{ http: { disable_meta: true } }, "http.disable_meta: not supported by this server yet"],
      [{ http: { disable_store: "yes" } }, "http.disable_store: must be true or false"],
      [{ store: { index: { dims: 0, embed: "openai:text-embedding-3-small" } } }, "store.index.dims: must be a whole number"],
      [{ store: { index: { dims: 8, embed: "text-embedding-3-small" } } }, "store.index.embed:"],
      [{ store: { index: { dims: 8, embed: "./embed.ts:embed", fields: [] } } }, "store.index.fields: must name at least one path"],
      [{ store: { path: "./store.py:store" } }, "store.path: unknown setting"],
      [{ store: { ttl: { default_ttl: -1 } } }, "store.ttl.default_ttl: must be a positive number of minutes"],
      [{ checkpointer: { ttl: { default_ttl: 0 } } }, "checkpointer.ttl.default_ttl: must be a positive number of minutes"],
      [{ checkpointer: { ttl: { strategy: "archive", default_ttl: 5 } } }, "checkpointer.ttl.strategy: must be"],
      [{ checkpointer: { ttl: { strategy: "delete" } } }, "checkpointer.ttl.strategy: is the strategy of default_ttl"],
    ];
    for (const [extra, message] of cases) expect(() => readLanggraphConfig(configFile(extra)), JSON.stringify(extra)).toThrow(message);
    // Build-time keys are for the build, and do not stop the server.
    expect(readLanggraphConfig(configFile({ dependencies: ["."], node_version: "20" })).http).toEqual({ disabled: new Set() });
    expect(readLanggraphConfig(configFile({ http: { disable_webhooks: true } })).http).toMatchObject({ webhooksOff: true, disabled: new Set() });
  });
});
