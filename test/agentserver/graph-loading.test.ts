import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemAssistantId } from "../../src/agentserver/assistants/index.ts";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Graph loading as a user's project meets it (issue 14, point 2): the real
 * `slipway agent` on test/fixtures/graph-loading, driven through the official SDK.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/graph-loading/langgraph.json", import.meta.url));
const LANGGRAPH_CONFIG = {
  dynamic: { configurable: { review: true }, recursion_limit: 12, context: { tone: "dry" } },
  // A graph the project does not have: ignored, as on the vendor's server.
  elsewhere: { configurable: { anything: 1 } },
};

type Message = { type?: string; content: unknown };
const human = (content: string) => ({ messages: [{ role: "human", content }] });
const lastContent = (values: unknown) => (values as { messages: Message[] }).messages.at(-1)?.content;

describe("graph loading: slipway agent on the graph-loading fixture", () => {
  let agent: AgentProcess;
  let client: Client;
  const dataDir = freshBackend("pglite", "loading").dataDir!;

  beforeAll(async () => {
    agent = await spawnAgent(["--config", CONFIG, "--data-dir", dataDir], {
      LANGGRAPH_CONFIG: JSON.stringify(LANGGRAPH_CONFIG),
      LOG_LEVEL: "info",
    });
    client = new Client({ apiUrl: agent.url });
  });
  afterAll(async () => {
    await agent?.kill();
  });

  it("serves a graph exported as a promise of a graph", async () => {
    const values = await client.runs.wait(null, "promised", { input: human("hi") });
    expect(lastContent(values)).toBe("built asynchronously");
  });

  it("getLogger() works inside graphs and its lines carry the run's ids", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "logging", { input: human("hi") });
    const values = await client.runs.join(thread.thread_id, run.run_id);
    expect(lastContent(values)).toBe("logged");
    const line = await waitForLine(agent, (entry) => entry.msg === "logged from inside the graph" && entry.run_id === run.run_id);
    expect(line).toMatchObject({
      level: 30,
      answer: 42,
      seen: 1,
      run_id: run.run_id,
      thread_id: thread.thread_id,
      graph_id: "logging",
      assistant_id: systemAssistantId("logging"),
      langgraph_node: "shout",
    });
  });

  it("LANGGRAPH_CONFIG sets the config and context of the graph's system assistant", async () => {
    const system = await client.assistants.get(systemAssistantId("dynamic"));
    expect(system.config).toEqual({ configurable: { review: true }, recursion_limit: 12 });
    expect(system.context).toEqual({ tone: "dry" });
    expect(system.metadata).toEqual({ created_by: "system" });
    // Graphs LANGGRAPH_CONFIG does not name keep an empty config.
    expect((await client.assistants.get(systemAssistantId("promised"))).config).toEqual({});
    // A run of the system assistant builds the factory with that config: the review node runs.
    const values = await client.runs.wait(null, "dynamic", { input: human("hi") });
    expect(lastContent(values)).toBe("reviewed");
  });

  it("as_node of a factory graph is a node of the graph the thread's assistant config builds", async () => {
    const reviewer = await client.assistants.create({ graphId: "dynamic", config: { configurable: { review: true } }, name: "reviewer" });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, reviewer.assistant_id, { input: human("hi"), interruptBefore: ["review"] });
    const before = await client.threads.getState(thread.thread_id);
    // A default build of the factory has no "review" node: this update used to answer 422.
    await client.threads.updateState(thread.thread_id, { values: { messages: [{ role: "ai", content: "reviewed by hand" }] }, asNode: "review" });
    // Reads build the same graph: the run paused before "review", which is what comes next.
    expect(before.next).toEqual(["review"]);
    const after = await client.threads.getState(thread.thread_id);
    expect(lastContent(after.values)).toBe("reviewed by hand");
    expect(after.next).toEqual([]);
    expect(after.metadata).toMatchObject({ source: "update" });
  });

  it("the graph and schema endpoints draw the graph its assistant's config builds", async () => {
    const plain = await client.assistants.create({ graphId: "dynamic", config: { configurable: { review: false } }, name: "plain" });
    const reviewer = await client.assistants.create({ graphId: "dynamic", config: { configurable: { review: true } }, name: "reviewer" });
    const nodesOf = async (assistantId: string) => ((await client.assistants.getGraph(assistantId)).nodes as Array<{ id: string }>).map((n) => n.id);
    expect(await nodesOf(reviewer.assistant_id)).toContain("review");
    expect(await nodesOf(plain.assistant_id)).not.toContain("review");
    // The system assistant's config comes from LANGGRAPH_CONFIG.
    expect(await nodesOf(systemAssistantId("dynamic"))).toContain("review");
    const schemas = await client.assistants.getSchemas(systemAssistantId("dynamic"));
    expect(schemas.graph_id).toBe("dynamic");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toContain("messages");
  });

  it("a changed LANGGRAPH_CONFIG leaves an existing system assistant as it is (as the vendor's), with a warning", async () => {
    await agent.kill();
    agent = await spawnAgent(["--config", CONFIG, "--data-dir", dataDir], {
      LANGGRAPH_CONFIG: JSON.stringify({ dynamic: { configurable: { review: false } } }),
    });
    client = new Client({ apiUrl: agent.url });
    expect((await client.assistants.get(systemAssistantId("dynamic"))).config).toEqual({ configurable: { review: true }, recursion_limit: 12 });
    const warning = await waitForLine(agent, (entry) => typeof entry.msg === "string" && entry.msg.startsWith("LANGGRAPH_CONFIG differs"));
    expect(warning).toMatchObject({ graph_id: "dynamic", assistant_id: systemAssistantId("dynamic") });
  });
});

/** The first JSON line of the agent's output that `match` accepts, waiting for it to be written. */
async function waitForLine(agent: AgentProcess, match: (entry: Record<string, unknown>) => boolean, ms = 10_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const line of agent.output().split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (match(entry)) return entry;
      } catch {
        // a partial line
      }
    }
    if (Date.now() > deadline) throw new Error(`no matching log line in:\n${agent.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
