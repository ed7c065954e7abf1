import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { PythonWorker } from "../../src/agentserver/python/worker.ts";
import { BACKENDS } from "../support/backends.ts";
import { collectWithin, startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { parseSseFrames } from "../support/sse-frames.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";

const PYTHON_PROJECT = fileURLToPath(new URL("../fixtures/python-agent/langgraph.json", import.meta.url));

/** Python graphs served by `slipway agent` through its worker (decision 0036), seen through the official JS SDK. */
describe.each(BACKENDS)("Python graphs (%s)", (backend) => {
  let agent: TestAgentServer;
  // Webhooks of runs land here (loopback, allowed for this server).
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    hooks = await startWebhookReceiver();
    agent = await startTestAgentServer(backend, { configPath: PYTHON_PROJECT, webhookAllowHosts: ["127.0.0.1"] });
  });
  afterAll(async () => {
    await agent?.close();
    await hooks?.close();
  });

  it("answers runs.wait with the graph's values, content blocks included", async () => {
    const thread = await agent.client.threads.create({ graphId: "echo" });
    const values = (await agent.client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
    })) as { messages: { type: string; content: unknown }[] };
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(values.messages[1].content).toBe("You said: hi");
  });

  it("streams values, updates and messages-tuple, and keeps state and history", async () => {
    const thread = await agent.client.threads.create();
    const events = await collectWithin((signal) =>
      agent.client.runs.stream(thread.thread_id, "echo", {
        input: { messages: [{ role: "user", content: "again" }] },
        streamMode: ["values", "updates", "messages-tuple"],
        signal,
      }),
    );
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("metadata");
    expect(names).toContain("values");
    expect(names).toContain("messages");
    const update = events.find((e) => e.event === "updates")?.data as { answer: { messages: { content: string }[] } };
    expect(update.answer.messages[0].content).toBe("You said: again");
    const state = await agent.client.threads.getState(thread.thread_id);
    expect(state.next).toEqual([]);
    expect((state.values as { messages: unknown[] }).messages).toHaveLength(2);
    const history = await agent.client.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThanOrEqual(3);
    expect(history[0].checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
  });

  it("streams events and the whole-message messages mode", async () => {
    const thread = await agent.client.threads.create();
    const events = await collectWithin((signal) =>
      agent.client.runs.stream(thread.thread_id, "echo", {
        input: { messages: [{ role: "user", content: "ev" }] },
        streamMode: ["events", "messages", "values"],
        signal,
      }),
    );
    const names = new Set(events.map((e) => e.event));
    expect(names).toContain("events");
    expect(names).toContain("values");
    const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data as { type: string; content: string }[]);
    expect(complete.map((m) => [m.type, m.content])).toEqual([
      ["human", "ev"],
      ["ai", "You said: ev"],
    ]);
    const kinds = new Set(events.filter((e) => e.event === "events").map((e) => (e.data as { event: string }).event));
    expect(kinds).toContain("on_chain_start");
    expect(kinds).toContain("on_chain_end");
  });

  it("stops at an interrupt and resumes with a Command", async () => {
    const thread = await agent.client.threads.create();
    await agent.client.runs.wait(thread.thread_id, "approve", { input: { request: "deploy" } });
    const waiting = await agent.client.threads.getState(thread.thread_id);
    expect(waiting.next).toEqual(["ask"]);
    expect(waiting.tasks[0].interrupts[0].value).toEqual({ question: "approve deploy?" });
    expect((await agent.client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const resumed = await agent.client.runs.wait(thread.thread_id, "approve", { command: { resume: "yes" } });
    expect(resumed).toEqual({ request: "deploy", approved: true });
    expect((await agent.client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("names a subgraph's events by its namespace", async () => {
    const thread = await agent.client.threads.create();
    const events = await collectWithin((signal) =>
      agent.client.runs.stream(thread.thread_id, "nested", { input: { steps: [] }, streamMode: ["updates"], streamSubgraphs: true, signal }),
    );
    expect(events.map((e) => e.event)).toEqual(["metadata", expect.stringMatching(/^updates\|child:/), "updates", "updates"]);
    expect((await agent.client.threads.getState(thread.thread_id)).values).toEqual({ steps: ["inner", "outer"] });
  });

  it("ends a run whose node raised in error, with the Python exception's type and message", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "fails", { input: { amount: 5 } });
    await agent.client.runs.join(thread.thread_id, run.run_id);
    const ended = await agent.client.runs.get(thread.thread_id, run.run_id);
    expect(ended.status).toBe("error");
    const stored = await agent.client.threads.get(thread.thread_id);
    expect(stored.status).toBe("error");
    expect(JSON.stringify(stored)).toContain("cannot charge 5");
  });

  it("draws the graph and loads a graph named by module", async () => {
    const [assistant] = await agent.client.assistants.search({ graphId: "echo" });
    const drawn = await agent.client.assistants.getGraph(assistant.assistant_id);
    expect(drawn.nodes.map((n) => n.id)).toEqual(["__start__", "answer", "__end__"]);
    const thread = await agent.client.threads.create();
    const values = (await agent.client.runs.wait(thread.thread_id, "by_module", { input: { messages: [{ role: "user", content: "mod" }] } })) as {
      messages: { content: string }[];
    };
    expect(values.messages[1].content).toBe("You said: mod");
  });

  it("answers the graph's schemas: typed fields from its channels, message types in $defs", async () => {
    const [echo] = await agent.client.assistants.search({ graphId: "echo" });
    const schemas = await agent.client.assistants.getSchemas(echo.assistant_id);
    expect(schemas.graph_id).toBe("echo");
    const state = schemas.state_schema as { properties: Record<string, { type?: string; items?: unknown }>; $defs: Record<string, unknown> };
    expect(Object.keys(state.properties)).toEqual(["messages"]);
    expect(state.properties.messages.type).toBe("array");
    expect(Object.keys(state.$defs)).toEqual(expect.arrayContaining(["AIMessage", "HumanMessage", "ToolMessage"]));
    expect(schemas.input_schema).toEqual(schemas.state_schema);
    const [approve] = await agent.client.assistants.search({ graphId: "approve" });
    const approveState = (await agent.client.assistants.getSchemas(approve.assistant_id)).state_schema as { properties: Record<string, { type?: string }> };
    expect(Object.fromEntries(Object.entries(approveState.properties).map(([name, field]) => [name, field.type]))).toEqual({
      request: "string",
      approved: "boolean",
    });
  });

  it("lists a graph's subgraphs with their schemas, by namespace and recursing, as a JS graph's (assistants suite)", async () => {
    expect(Object.keys(await agent.client.assistants.getSubgraphs("typed"))).toEqual(["sub"]);
    const all = await agent.client.assistants.getSubgraphs("typed", { recurse: true });
    expect(Object.keys(all).sort()).toEqual(["sub", "sub|deep"]);
    expect(all["sub|deep"]!.state_schema).toMatchObject({ properties: { topic: { type: "string" }, count: { type: "integer" } } });
    // Under the JS server's names as well, as a JS graph's subgraphs answer.
    expect((all["sub|deep"] as unknown as Record<string, unknown>).state).toEqual(all["sub|deep"]!.state_schema);
    expect(Object.keys(await agent.client.assistants.getSubgraphs("typed", { namespace: "sub|deep", recurse: true }))).toEqual(["sub|deep"]);
    expect(Object.keys(await agent.client.assistants.getSubgraphs("typed", { namespace: "sub" }))).toEqual(["sub"]);
    expect(await agent.client.assistants.getSubgraphs("typed", { namespace: "elsewhere" })).toEqual({});
    expect(Object.keys(await agent.client.assistants.getSubgraphs("nested"))).toEqual(["child"]);
    expect(await agent.client.assistants.getSubgraphs("echo")).toEqual({});
    // The parent's own schemas: its state's fields and its context's defaults.
    const schemas = await agent.client.assistants.getSchemas("typed");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual(["topic", "count", "items"]);
    expect(schemas.context_schema).toMatchObject({ properties: { model: { type: "string", default: "stand-in" } } });
  });

  it("posts the run's record, with the thread's values, to its webhook when it ends (as the JS suite's run options)", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "hook" }] }, webhook: hooks.url });
    await agent.client.runs.join(thread.thread_id, run.run_id);
    await until(async () => hooks.received.some((r) => r.run_id === run.run_id));
    const record = hooks.received.find((r) => r.run_id === run.run_id)!;
    expect(record).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: "success" });
    expect((record.values as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual(["hook", "You said: hook"]);
  });

  it("replays a resumable run's stream after Last-Event-ID (as the JS suite's runs)", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "slow", { input: { pause: 0 }, streamMode: ["values"], streamResumable: true });
    await agent.client.runs.join(thread.thread_id, run.run_id);
    const streamUrl = `${agent.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`;
    const replay = async (lastEventId: string) => parseSseFrames(await (await fetch(streamUrl, { headers: { "Last-Event-ID": lastEventId } })).text());
    const all = await replay("-1");
    expect(all.map((frame) => frame.event)).toEqual(["metadata", "values", "values", "values"]);
    expect(JSON.parse(all.at(-1)!.data)).toEqual({ pause: 0, steps: ["first", "second"] });
    const rest = await replay(all[1].id!);
    expect(rest.map((frame) => frame.id)).toEqual(all.slice(2).map((frame) => frame.id));
  });

  it("ends a run on the state the worker sent with it, without asking the worker for the thread's state again", async () => {
    const requests = vi.spyOn(PythonWorker.prototype, "request");
    try {
      const thread = await agent.client.threads.create();
      await agent.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "once" }] } });
      const ended = await agent.client.threads.get(thread.thread_id);
      expect(ended.status).toBe("idle");
      expect((ended.values as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual(["once", "You said: once"]);
      // An interrupt's end too: the thread's interrupts and status come from that state.
      const paused = await agent.client.threads.create();
      await agent.client.runs.wait(paused.thread_id, "approve", { input: { request: "ship" } });
      const waiting = await agent.client.threads.get(paused.thread_id);
      expect(waiting.status).toBe("interrupted");
      expect(
        Object.values(waiting.interrupts)
          .flat()
          .map((i) => (i as { value: unknown }).value),
      ).toEqual([{ question: "approve ship?" }]);
      const ops = requests.mock.calls.map(([op]) => op);
      expect(ops.filter((op) => op === "run")).toHaveLength(2);
      expect(ops).not.toContain("state");
    } finally {
      requests.mockRestore();
    }
  });

  it("gives a graph with a context schema its defaults when the run sends no context, and the run's context when it does", async () => {
    expect(await agent.client.runs.wait(null, "context", { input: {} })).toEqual({ model: "stand-in/default" });
    expect(await agent.client.runs.wait(null, "context", { input: {}, context: { model: "stand-in/chosen" } })).toEqual({ model: "stand-in/chosen" });
  });

  it("builds a factory's graph per run from the run's config", async () => {
    expect(await agent.client.runs.wait(null, "factory", { input: { name: "Ada" } })).toEqual({ name: "Ada", greeting: "Hello, Ada" });
    expect(await agent.client.runs.wait(null, "factory", { input: { name: "Ada" }, config: { configurable: { salutation: "Bonjour" } } })).toEqual({
      name: "Ada",
      greeting: "Bonjour, Ada",
    });
  });

  it("applies multitask strategies to a busy thread: reject refuses, interrupt takes over", async () => {
    const thread = await agent.client.threads.create();
    const first = await agent.client.runs.create(thread.thread_id, "slow", { input: { pause: 30 } });
    await until(async () => (await agent.client.runs.get(thread.thread_id, first.run_id)).status === "running");
    await expect(agent.client.runs.create(thread.thread_id, "slow", { input: { pause: 0 }, multitaskStrategy: "reject" })).rejects.toThrow(/409/);
    const second = await agent.client.runs.create(thread.thread_id, "slow", { input: { pause: 0 }, multitaskStrategy: "interrupt" });
    await agent.client.runs.join(thread.thread_id, second.run_id);
    expect((await agent.client.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
    expect((await agent.client.runs.get(thread.thread_id, second.run_id)).status).toBe("success");
  });

  it("fires a thread cron on a Python graph", async () => {
    const thread = await agent.client.threads.create();
    const cron = await agent.client.crons.createForThread(thread.thread_id, "echo", {
      schedule: "* * * * * *",
      input: { messages: [{ role: "user", content: "tick" }] },
    });
    await until(async () => (((await agent.client.threads.getState(thread.thread_id)).values as { messages?: unknown[] }).messages?.length ?? 0) >= 4);
    await agent.client.crons.delete(cron.cron_id);
    const said = ((await agent.client.threads.getState(thread.thread_id)).values as { messages: { content: string }[] }).messages.map((m) => m.content);
    expect(said.slice(0, 4)).toEqual(["tick", "You said: tick", "tick", "You said: tick"]);
  });

  it("uses the server's store from inside a graph, as the store API sees it", async () => {
    const user = `u${Date.now()}`;
    await agent.client.store.putItem(["memories", user], "from-api", { text: "likes tea" });
    const values = (await agent.client.runs.wait(null, "memory", { input: { user, fact: "lives in Lyon" } })) as { known: string[] };
    expect(values.known).toEqual(["likes tea", "lives in Lyon"]);
    const found = await agent.client.store.searchItems(["memories", user]);
    expect(found.items.map((item) => item.value.text).sort()).toEqual(["likes tea", "lives in Lyon"]);
  });

  it("retries a run from its last checkpoint after the worker is killed mid-run", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "slow", { input: { pause: 30 }, durability: "sync" });
    await until(async () => ((await agent.client.threads.getState(thread.thread_id)).values as { steps?: string[] }).steps?.includes("first") === true);
    const [worker] = pythonWorkersOf(process.pid);
    expect(worker).toBeDefined();
    process.kill(worker, "SIGKILL");
    await agent.client.runs.join(thread.thread_id, run.run_id);
    expect((await agent.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const steps = ((await agent.client.threads.getState(thread.thread_id)).values as { steps: string[] }).steps;
    expect(steps).toEqual(["first", "second"]);
  }, 120_000);
});

/** The Python workers started by this test process (their parent is us). */
function pythonWorkersOf(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("slipway_worker");
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
