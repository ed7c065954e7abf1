import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { RemoteGraph } from "@langchain/langgraph/remote";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Stream and state fidelity (issue 14, point 4), each compared with what the vendor's
 * JS server (@langchain/langgraph-api 1.5) sends: the real `slipway agent` on
 * test/fixtures/graph-kinds, through the official SDK and RemoteGraph.
 */
// Only the graphs these tests run: fewer modules to import, a quicker start.
const CONFIG = fileURLToPath(new URL("../fixtures/graph-kinds/langgraph.stream.json", import.meta.url));
const human = (content: string) => ({ messages: [{ role: "human", content }] });

type Part = { event: string; data: unknown };
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("stream and state fidelity: slipway agent on the graph-kinds fixture", () => {
  let agent: AgentProcess;
  let client: Client;
  const dataDir = freshBackend("pglite", "fidelity").dataDir!;

  beforeAll(async () => {
    agent = await spawnAgent(["--config", CONFIG, "--data-dir", dataDir]);
    client = new Client({ apiUrl: agent.url });
  }, 120_000);
  afterAll(async () => {
    await agent?.kill();
  });

  it("SSE event ids start at 0", async () => {
    const response = await fetch(`${agent.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "annotation", input: { topic: "ids" }, stream_mode: ["values"] }),
    });
    const ids = [...(await response.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids.slice(0, 3)).toEqual([0, 1, 2]);
  });

  it("legacy messages mode: messages/metadata, messages/partial, messages/complete, and no tuples", async () => {
    const parts = await collect(client.runs.stream(null, "messages", { input: human("hello there"), streamMode: ["messages"] }) as AsyncIterable<Part>);
    const events = new Set(parts.map((part) => part.event));
    expect(events.has("messages/metadata")).toBe(true);
    expect(events.has("messages/partial")).toBe(true);
    expect(events.has("messages/complete")).toBe(true);
    expect(events.has("messages")).toBe(false);
    const partials = parts.filter((part) => part.event === "messages/partial").map((part) => (part.data as Array<{ content: string }>)[0]!.content);
    // Each partial is the whole message so far.
    expect(partials.at(-1)).toBe("echo: hello there");
    expect(partials[0]!.length).toBeLessThan(partials.at(-1)!.length);
    const complete = parts.filter((part) => part.event === "messages/complete").flatMap((part) => part.data as Array<{ type: string; content: string }>);
    expect(complete.find((message) => message.type === "ai")?.content).toBe("echo: hello there");
    // As the vendor's: every message that enters the state completes, the input's too.
    expect(complete.find((message) => message.type === "human")?.content).toBe("hello there");
    const metadata = parts.find((part) => part.event === "messages/metadata")!.data as Record<string, { metadata: Record<string, unknown> }>;
    expect(Object.values(metadata)[0]!.metadata).toMatchObject({ langgraph_node: "agent" });
  });

  it("messages-tuple mode is separate: [chunk, metadata] tuples as event messages, no messages/*", async () => {
    const parts = await collect(client.runs.stream(null, "messages", { input: human("tuples"), streamMode: ["messages-tuple"] }) as AsyncIterable<Part>);
    const events = new Set(parts.map((part) => part.event));
    expect(events.has("messages")).toBe(true);
    expect([...events].some((event) => event.startsWith("messages/"))).toBe(false);
    const [chunk, metadata] = parts.find((part) => part.event === "messages")!.data as [{ content: string }, Record<string, unknown>];
    expect(typeof chunk.content).toBe("string");
    expect(metadata).toMatchObject({ langgraph_node: "agent" });
  });

  it("debug checkpoint events carry checkpoint and parent_checkpoint", async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, "annotation", { input: { topic: "debug" }, streamMode: ["debug"] }) as AsyncIterable<Part>,
    );
    const checkpoints = parts
      .filter((part) => part.event === "debug" && (part.data as { type: string }).type === "checkpoint")
      .map((part) => (part.data as { payload: Record<string, unknown> }).payload);
    expect(checkpoints.length).toBeGreaterThan(1);
    const shape = { thread_id: thread.thread_id, checkpoint_ns: "", checkpoint_id: expect.any(String), checkpoint_map: null };
    expect(checkpoints[0]!.checkpoint).toEqual(shape);
    expect(checkpoints[0]!.parent_checkpoint).toBeNull();
    const last = checkpoints.at(-1)!;
    expect(last.checkpoint).toEqual(shape);
    expect(last.parent_checkpoint).toEqual({ ...shape, checkpoint_id: (checkpoints.at(-2)!.checkpoint as { checkpoint_id: string }).checkpoint_id });
    expect(last).toHaveProperty("parent_config");
    expect(last).not.toHaveProperty("parentConfig");
    // The checkpoint really is the thread's latest.
    const state = await client.threads.getState(thread.thread_id);
    expect(state.checkpoint.checkpoint_id).toBe((last.checkpoint as { checkpoint_id: string }).checkpoint_id);
  });

  it("thread-state tasks carry path; a subgraph task's checkpoint has no null id or map", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "parent", { input: { question: "why?" } });
    const state = await client.threads.getState(thread.thread_id);
    const task = state.tasks[0] as unknown as { name: string; path: unknown; checkpoint: Record<string, unknown> };
    expect(task.name).toBe("child");
    expect(task.path).toEqual(["__pregel_pull", "child"]);
    expect(task.checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: expect.stringMatching(/^child:/) });
  });

  it("stateless /runs/stream and /runs/wait accept if_not_exists, as RemoteGraph sends it", async () => {
    const remote = new RemoteGraph({ graphId: "annotation", url: agent.url });
    // The last values chunk, as the vendor's server answers: every channel, not only the output's.
    expect(await remote.invoke({ topic: "remote" })).toMatchObject({ notes: ["about remote"], count: 1 });
    const streamed: unknown[] = [];
    for await (const chunk of await remote.stream({ topic: "streamed" }, { streamMode: "updates" })) streamed.push(chunk);
    expect(streamed).toEqual([{ write: { notes: ["about streamed"], count: 1 } }]);
    for (const ifNotExists of ["create", "reject"] as const) {
      expect(await client.runs.wait(null, "annotation", { input: { topic: "sdk" }, ifNotExists })).toMatchObject({ notes: ["about sdk"], count: 1 });
    }
    const wrong = await fetch(`${agent.url}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "annotation", input: { topic: "x" }, if_not_exists: "maybe" }),
    });
    expect(wrong.status).toBe(422);
  });

  it("GET /docs is listed in /openapi.json, and serves the docs page", async () => {
    const document = (await (await fetch(`${agent.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { tags?: string[] }>> };
    expect(document.paths["/docs"]?.get?.tags).toEqual(["System"]);
    const page = await fetch(`${agent.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
  });
});
