import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";
import { openRoutedAgent, type RoutedAgent } from "../router/routed-agent.ts";

/**
 * `new Client()` without an apiUrl, inside a route of the project's `http.app` and inside
 * a graph node, reaches the server it runs in (the vendor's server hands the SDK an
 * in-process fetch): in the agent server behind --api-key (started in this process, as
 * `slipway agent` starts it), with a wrong key in the environment that the client would
 * otherwise send, and in an agent behind the router.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/http-project/langgraph.client.json", import.meta.url));

type OwnThreads = { thread_id: string; values: { seen: { thread_id: string; metadata: Record<string, unknown> } }; found: string[] };

function expectOwnThread(body: OwnThreads): void {
  expect(body.values.seen).toMatchObject({ thread_id: body.thread_id, metadata: { made_by: "http.app" } });
  expect(body.found).toContain(body.thread_id);
}

describe("new Client() inside slipway agent", () => {
  let server: RunningAgentServer;
  let url: string;
  const environment = process.env.LANGSMITH_API_KEY;
  beforeAll(async () => {
    // A key the SDK finds in the environment (LangSmith tracing sets one) and this server refuses.
    process.env.LANGSMITH_API_KEY = "a-key-this-server-refuses";
    const target = freshBackend("pglite", "loopback");
    server = await startAgentServer({
      configPath: CONFIG,
      port: 0,
      host: "127.0.0.1",
      dataDir: target.dataDir,
      schema: target.schema,
      apiKey: "the-key",
      logLevel: "silent",
    });
    url = server.url;
  }, 90_000);
  afterAll(async () => {
    if (environment === undefined) delete process.env.LANGSMITH_API_KEY;
    else process.env.LANGSMITH_API_KEY = environment;
    await server?.close();
  });

  it("reaches the server from a route of http.app: threads, a waited run and a search through the official SDK", async () => {
    const answer = await fetch(`${url}/threads-of-my-own`, { method: "POST", headers: { "x-api-key": "the-key" } });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expectOwnThread((await answer.json()) as OwnThreads);
    // The app's routes still need the key from outside.
    expect((await fetch(`${url}/threads-of-my-own`, { method: "POST", headers: { "x-api-key": "wrong" } })).status).toBe(403);
  });

  it("reaches the server from a graph node", async () => {
    const client = new Client({ apiUrl: url, apiKey: "the-key" });
    const thread = await client.threads.create({ metadata: { made_by: "test" } });
    const values = (await client.runs.wait(thread.thread_id, "caller", { input: {} })) as OwnThreads["values"];
    expect(values.seen).toEqual({ thread_id: thread.thread_id, status: "busy", metadata: expect.objectContaining({ made_by: "test" }) });
  });
});

describe("new Client() inside an agent behind the router", () => {
  let routed: RoutedAgent;
  beforeAll(async () => {
    routed = await openRoutedAgent(CONFIG, "loopbackrouted");
    routed.serve();
  }, 90_000);
  afterAll(async () => {
    await routed?.close();
  });

  it("reaches its own agent server, never the router, with a key the project never saw", async () => {
    const answer = await fetch(routed.url("/threads-of-my-own"), { method: "POST", headers: { "x-api-key": routed.owner.api_key } });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expectOwnThread((await answer.json()) as OwnThreads);
  });
});
