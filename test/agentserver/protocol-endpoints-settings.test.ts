import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TaskState } from "@a2a-js/sdk";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";
import { a2aClientFactory, answerOf, fetchWithHeader, send, userMessage } from "../support/a2a-client.ts";

/**
 * MCP and A2A under langgraph.json's settings: custom auth (`auth.path`) applies to
 * them as to every route, its `on` handlers included; `http.disable_mcp` and
 * `http.disable_a2a` turn them off.
 */
const AUTH_CONFIG = fileURLToPath(new URL("../fixtures/custom-auth/langgraph.json", import.meta.url));
const GRAPHS = fileURLToPath(new URL("../fixtures/agents/src/graphs.ts", import.meta.url));

async function serve(configPath: string): Promise<RunningAgentServer> {
  const target = freshBackend("pglite", "proto");
  return startAgentServer({ configPath, port: 0, host: "127.0.0.1", dataDir: target.dataDir, schema: target.schema, logLevel: "error" });
}

describe("MCP and A2A under custom auth", () => {
  let server: RunningAgentServer;
  let aliceBot: string;
  const bearer = (token: string) => fetchWithHeader("authorization", `Bearer ${token}`);
  const mcpAs = async (token: string) => {
    const client = new McpClient({ name: "auth-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/`), { fetch: bearer(token) }));
    return client;
  };

  beforeAll(async () => {
    server = await serve(AUTH_CONFIG);
    // The fixture's Auth lets each user see only what they created: alice makes an assistant of her own.
    const alice = new Client({ apiUrl: server.url, defaultHeaders: { authorization: "Bearer token-alice" } });
    aliceBot = (await alice.assistants.create({ graphId: "agent", name: "alice-bot" })).assistant_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("MCP: 401 without a token; each user's tools are the assistants their on handlers let them see", async () => {
    const none = await fetch(`${server.url}/mcp/`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(none.status).toBe(401);
    const alice = await mcpAs("token-alice");
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(["alice-bot"]);
    const result = await alice.callTool({ name: "alice-bot", arguments: { messages: [{ role: "human", content: "as alice" }] } });
    expect(result.isError).toBe(false);
    await alice.close();
    const bob = await mcpAs("token-bob");
    expect((await bob.listTools()).tools).toEqual([]);
    await expect(bob.callTool({ name: "alice-bot", arguments: {} })).rejects.toThrow(/Unknown tool/);
    await bob.close();
  });

  it("A2A: a user's task is invisible to another user (the on handlers of the run routes apply)", async () => {
    const cardUrl = `${server.url}/.well-known/agent-card.json?assistant_id=${aliceBot}`;
    const alice = await a2aClientFactory(bearer("token-alice")).createFromUrl(cardUrl, "");
    const task = await send(alice, userMessage("secret"));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toBe("You said: secret");
    expect((await alice.getTask({ tenant: "", id: task.id })).id).toBe(task.id);
    // Bob cannot even read alice's card; through her endpoint's URL he finds neither the assistant nor the task.
    expect((await bearer("token-bob")(cardUrl)).status).toBe(404);
    const asBob = (body: object) =>
      bearer("token-bob")(`${server.url}/a2a/${aliceBot}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const bobGets = await asBob({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: task.id } });
    expect(bobGets.status).toBe(404);
    expect((await bobGets.json()).error.code).toBe(-32001);
    const anonymous = await fetch(`${server.url}/a2a/${aliceBot}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: task.id } }),
    });
    expect(anonymous.status).toBe(401);
  });
});

describe("http.disable_mcp and http.disable_a2a", () => {
  let server: RunningAgentServer;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-protocols-"));
    const config = join(dir, "langgraph.json");
    writeFileSync(config, JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, http: { disable_mcp: true, disable_a2a: true } }));
    server = await serve(config);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers 404 on the endpoints it turns off, as the vendor's server does", async () => {
    const post = (path: string) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    expect((await post("/mcp/")).status).toBe(404);
    expect((await post("/mcp")).status).toBe(404);
    expect((await post("/a2a/agent")).status).toBe(404);
    expect((await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=agent`)).status).toBe(404);
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
  });
});
