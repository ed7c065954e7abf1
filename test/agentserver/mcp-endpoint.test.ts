import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

/**
 * `/mcp/` driven by the official MCP client (@modelcontextprotocol/sdk) over its
 * streamable HTTP transport, and by raw requests for what a client library never sends.
 * Each assistant of the fixture project is a tool; the `agent` graph answers with the
 * echo model (no network).
 */
const KEY = "mcp-key";
const ACCEPT_BOTH = "application/json, text/event-stream";

describe.each(BACKENDS)("MCP endpoint on %s", (backend) => {
  let agent: TestAgentServer;
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { "x-api-key": KEY } } });
    const client = new McpClient({ name: "slipway-test", version: "1.0.0" });
    await client.connect(transport);
    return { client, transport };
  };
  const post = (body: string | object, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${agent.url}/mcp/`, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json", accept: ACCEPT_BOTH, "x-api-key": KEY, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    agent = await startTestAgentServer(backend, { apiKey: KEY, workers: 4 });
  });
  afterAll(async () => {
    await agent?.close();
  });

  it("lists every assistant as a tool whose input schema is its graph's, in a session", async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["agent", "approval", "builder", "factory", "failing", "nested", "slow"]);
    const agentTool = tools.find((tool) => tool.name === "agent")!;
    expect(agentTool.inputSchema.type).toBe("object");
    expect(Object.keys(agentTool.inputSchema.properties ?? {})).toContain("messages");
    expect(agentTool.description).toContain("agent");
    await transport.terminateSession();
    await client.close();
  });

  it("calls a tool: a stateless run of the graph, answered with its output", async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: "agent", arguments: { messages: [{ role: "human", content: "hello tool" }] } });
    expect(result.isError).toBe(false);
    const output = result.structuredContent as { messages: Array<{ type: string; content: string }> };
    expect(output.messages.at(-1)).toMatchObject({ type: "ai", content: "You said: hello tool" });
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(output);
    // A graph that raises is a tool error, not a protocol error.
    const failed = await client.callTool({ name: "failing", arguments: { messages: [] } });
    expect(failed.isError).toBe(true);
    expect((failed.content as Array<{ text: string }>)[0]!.text).toContain("the graph failed on purpose");
    // The run was stateless: no thread stays behind.
    expect(await agent.client.threads.search({ limit: 10 })).toEqual([]);
    await client.close();
  });

  it("streams a tool call as SSE with progress notifications when the client asks for progress", async () => {
    const { client } = await connect();
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool({ name: "slow", arguments: { delay_ms: 20, steps: 3 } }, undefined, { onprogress: (update) => progress.push(update) });
    expect(result.isError).toBe(false);
    expect((result.structuredContent as { steps: number }).steps).toBe(0);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(progress[0]!.message).toContain("work");
    await client.close();

    // On the wire: text/event-stream, the notifications then the response.
    const raw = await post({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "agent", arguments: { messages: [{ role: "human", content: "hi" }] }, _meta: { progressToken: "p1" } },
    });
    expect(raw.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await raw.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)));
    expect(frames.at(0)).toMatchObject({ method: "notifications/progress", params: { progressToken: "p1", progress: 1 } });
    expect(frames.at(-1)).toMatchObject({ id: 7, result: { isError: false } });
  });

  it("cancels the run of a tool call whose client goes away", async () => {
    const interrupted = async () => {
      const metrics = (await (await fetch(`${agent.url}/metrics?format=json`, { headers: { "x-api-key": KEY } })).json()) as {
        slipway: { run_duration_seconds: Record<string, { count: number }> };
      };
      return metrics.slipway.run_duration_seconds.interrupted?.count ?? 0;
    };
    const before = await interrupted();
    const leaving = new AbortController();
    const call = post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: { delay_ms: 200, steps: 50 } } }, {}, leaving.signal);
    await new Promise((resolve) => setTimeout(resolve, 800));
    leaving.abort();
    await expect(call).rejects.toThrow();
    // The run would take 10 s; it ends interrupted well before.
    let count = before;
    for (let i = 0; i < 50 && count === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      count = await interrupted();
    }
    expect(count).toBe(before + 1);
  });

  it("answers bad JSON-RPC with the standard error codes, never a 500", async () => {
    const parse = await post("{not json");
    expect(parse.status).toBe(400);
    expect((await parse.json()).error.code).toBe(-32700);
    const invalid = await post({ jsonrpc: "1.0", id: 1, method: "ping" });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ id: 1, error: { code: -32600 } });
    const batch = await post([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    expect((await batch.json()).error.code).toBe(-32600);
    const unknown = await post({ jsonrpc: "2.0", id: 2, method: "resources/read", params: {} });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ id: 2, error: { code: -32601 } });
    const noName = await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } });
    expect(await noName.json()).toMatchObject({ id: 3, error: { code: -32602 } });
    const noTool = await post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "nope" } });
    expect(await noTool.json()).toMatchObject({ id: 4, error: { code: -32602, message: "Unknown tool: nope" } });
    const badParams = await post({ jsonrpc: "2.0", id: 5, method: "initialize", params: [] });
    expect((await badParams.json()).error.code).toBe(-32602);
    const nul = await post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "agent", arguments: { messages: "\u0000" } } });
    expect(nul.status).toBe(400);
    expect((await nul.json()).error.code).toBe(-32602);
    // The transport's rules: both media types accepted, a known protocol revision.
    const accept = await post({ jsonrpc: "2.0", id: 8, method: "ping" }, { accept: "application/json" });
    expect(accept.status).toBe(400);
    const revision = await post({ jsonrpc: "2.0", id: 9, method: "ping" }, { "mcp-protocol-version": "1999-01-01" });
    expect(revision.status).toBe(400);
    // Notifications and client responses are accepted without a body.
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    expect((await post({ jsonrpc: "2.0", id: 1, result: {} })).status).toBe(202);
  });

  it("keeps sessions in the database: ended ones answer 404; GET is 405; the API key applies", async () => {
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    expect(init.status).toBe(200);
    expect((await init.json()).result.protocolVersion).toBe("2025-06-18");
    const session = init.headers.get("mcp-session-id")!;
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session })).status).toBe(200);
    const end = await fetch(`${agent.url}/mcp/`, { method: "DELETE", headers: { "mcp-session-id": session, "x-api-key": KEY } });
    expect(end.status).toBe(204);
    const after = await post({ jsonrpc: "2.0", id: 3, method: "ping" }, { "mcp-session-id": session });
    expect(after.status).toBe(404);
    expect((await after.json()).error.code).toBe(-32001);
    expect((await fetch(`${agent.url}/mcp/`, { method: "DELETE", headers: { "mcp-session-id": session, "x-api-key": KEY } })).status).toBe(404);
    // Without a session (the vendor's stateless clients) requests are served.
    expect((await post({ jsonrpc: "2.0", id: 4, method: "ping" })).status).toBe(200);
    expect((await fetch(`${agent.url}/mcp/`, { headers: { accept: "text/event-stream", "x-api-key": KEY } })).status).toBe(405);
    expect((await post({ jsonrpc: "2.0", id: 5, method: "ping" }, { "x-api-key": "wrong" })).status).toBe(403);
    expect(
      (await fetch(`${agent.url}/mcp/`, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT_BOTH }, body: "{}" })).status,
    ).toBe(401);
  });
});
