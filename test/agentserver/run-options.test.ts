import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { collect, startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";

type Message = { type: string; content: unknown };
const human = (content: string) => ({ messages: [{ role: "human", content }] });

describe.each(BACKENDS)("run options and stream modes on %s", (backend) => {
  let t: TestAgentServer;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    t = await startTestAgentServer(backend, { webhookAllowHosts: ["127.0.0.1"], heartbeatMs: 100 });
  });
  afterAll(async () => {
    await t?.close();
    await hooks?.close();
  });

  it("subgraph namespaces, custom, debug, tasks and checkpoints modes", async () => {
    const parts = await collect(
      t.client.runs.stream(null, "nested", {
        input: human("go"),
        streamMode: ["updates", "custom", "debug", "tasks", "checkpoints"],
        streamSubgraphs: true,
      }),
    );
    const events = new Set(parts.map((p) => p.event as string));
    expect(events).toContain("updates");
    expect(events).toContain("custom");
    expect(events).toContain("debug");
    expect(events).toContain("tasks");
    expect(events).toContain("checkpoints");
    expect([...events].some((e) => e.startsWith("updates|child:"))).toBe(true);
    expect([...events].some((e) => e.startsWith("custom|child:"))).toBe(true);
    const custom = parts.filter((p) => p.event === "custom").map((p) => p.data);
    expect(custom).toContainEqual({ progress: "outer" });
  });

  it("events mode forwards LangChain callback events", async () => {
    const parts = await collect(t.client.runs.stream(null, "agent", { input: human("e"), streamMode: ["events"] }));
    const kinds = parts.filter((p) => p.event === "events").map((p) => (p.data as { event: string }).event);
    expect(kinds).toContain("on_chat_model_stream");
    expect(kinds).toContain("on_chain_end");
  });

  it("heartbeats are sent as SSE comments while a run is quiet", async () => {
    const response = await fetch(`${t.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "slow", input: { delay_ms: 350, steps: 1 }, stream_mode: "values" }),
    });
    expect(await response.text()).toContain(": heartbeat\n\n");
  });

  it("webhook receives the run record when the run ends", async () => {
    const thread = await t.client.threads.create();
    const run = await t.client.runs.create(thread.thread_id, "agent", { input: human("hook"), webhook: hooks.url });
    await t.client.runs.join(thread.thread_id, run.run_id);
    for (let i = 0; i < 100 && !hooks.received.some((r) => r.run_id === run.run_id); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const record = hooks.received.find((r) => r.run_id === run.run_id)!;
    expect(record).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: "success" });
  });

  it("after_seconds delays the start", async () => {
    const thread = await t.client.threads.create();
    const run = await t.client.runs.create(thread.thread_id, "agent", { input: human("later"), afterSeconds: 1 });
    expect((await t.client.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    const started = Date.now();
    await t.client.runs.join(thread.thread_id, run.run_id);
    expect(Date.now() - started).toBeGreaterThan(500);
    expect((await t.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  });

  it("a run queued behind a delayed run starts once that one is cancelled, not when it would have been due", async () => {
    const thread = await t.client.threads.create();
    const delayed = await t.client.runs.create(thread.thread_id, "agent", { input: human("in an hour"), afterSeconds: 3600 });
    const behind = await t.client.runs.create(thread.thread_id, "agent", { input: human("now"), multitaskStrategy: "enqueue" });
    await t.client.runs.cancel(thread.thread_id, delayed.run_id);
    // Nothing else wakes a worker for it: the cancel tells them the thread's queue moved.
    const joined = await Promise.race([
      t.client.runs.join(thread.thread_id, behind.run_id).then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("still waiting after 10 s"), 10_000)),
    ]);
    expect(joined).toBe("ended");
    expect((await t.client.runs.get(thread.thread_id, behind.run_id)).status).toBe("success");
  });

  it("if_not_exists create makes the thread; reject (default) answers 404", async () => {
    const id = crypto.randomUUID();
    await expect(t.client.runs.create(id, "agent", { input: human("x") })).rejects.toThrow(/404/);
    const run = await t.client.runs.create(id, "agent", { input: human("x"), ifNotExists: "create" });
    await t.client.runs.join(id, run.run_id);
    const thread = await t.client.threads.get(id);
    expect(thread.metadata).toMatchObject({ graph_id: "agent" });
  });

  it("on_disconnect cancel stops the run when the client leaves", async () => {
    const thread = await t.client.threads.create();
    const controller = new AbortController();
    const response = await fetch(`${t.url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "slow", input: { delay_ms: 200, steps: 30 }, on_disconnect: "cancel" }),
      signal: controller.signal,
    });
    const runId = response.headers.get("content-location")!.split("/").at(-1)!;
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 200; i++) {
      if ((await t.client.runs.get(thread.thread_id, runId)).status === "interrupted") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await t.client.runs.get(thread.thread_id, runId)).status).toBe("interrupted");
  });

  it("interrupt_before pauses before a node; checkpoint_id reruns from an earlier state", async () => {
    const thread = await t.client.threads.create();
    await t.client.runs.wait(thread.thread_id, "agent", { input: human("hold"), interruptBefore: ["agent"] });
    const paused = await t.client.threads.getState(thread.thread_id);
    expect(paused.next).toEqual(["agent"]);
    expect((await t.client.threads.get(thread.thread_id)).status).toBe("interrupted");
    await t.client.runs.wait(thread.thread_id, "agent", { input: null });
    const done = await t.client.threads.getState<{ messages: Message[] }>(thread.thread_id);
    expect(done.values.messages.map((m) => m.content)).toEqual(["hold", "You said: hold"]);

    // Fork from the paused checkpoint with a new message.
    const forked = (await t.client.runs.wait(thread.thread_id, "agent", {
      input: human("other"),
      checkpointId: paused.checkpoint.checkpoint_id!,
    })) as { messages: Message[] };
    expect(forked.messages.map((m) => m.content)).toEqual(["hold", "other", "You said: other"]);
  });

  it("config, context and metadata reach the graph and the run record", async () => {
    const values = (await t.client.runs.wait(null, "factory", {
      input: { messages: [] },
      config: { configurable: { reply: "configured" } },
      metadata: { team: "a" },
    })) as { messages: Message[] };
    expect(values.messages.at(-1)!.content).toBe("configured");
    const thread = await t.client.threads.create({ metadata: { team: "a", place: "thread" } });
    const run = await t.client.runs.create(thread.thread_id, "agent", { input: human("m"), metadata: { team: "b" }, durability: "sync" });
    // As on the vendor's servers: the assistant's metadata, then the thread's, then the run's own.
    expect(run.metadata).toMatchObject({ created_by: "system", place: "thread", graph_id: "agent", team: "b" });
    expect((run as unknown as { kwargs: Record<string, unknown> }).kwargs).toMatchObject({ durability: "sync" });
  });

  it("runs of different threads execute concurrently", async () => {
    const threads = await Promise.all([1, 2, 3, 4].map(() => t.client.threads.create()));
    const started = Date.now();
    const runs = await Promise.all(threads.map((th) => t.client.runs.create(th.thread_id, "slow", { input: { delay_ms: 400, steps: 1 } })));
    await Promise.all(runs.map((r, i) => t.client.runs.join(threads[i].thread_id, r.run_id)));
    // Serial execution would need 1.6 s; parallel takes about one run's time.
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("the thread stream carries the runs of the thread", async () => {
    const thread = await t.client.threads.create();
    const controller = new AbortController();
    const seen: string[] = [];
    const listening = (async () => {
      try {
        for await (const part of t.client.threads.joinStream(thread.thread_id, { signal: controller.signal })) {
          seen.push(part.event as string);
          if (seen.includes("values")) controller.abort();
        }
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await t.client.runs.wait(thread.thread_id, "agent", { input: human("ts") });
    await Promise.race([listening, new Promise((r) => setTimeout(r, 3000))]);
    controller.abort();
    expect(seen).toContain("metadata");
    expect(seen).toContain("values");
  });

  it("batch creates several stateless runs; bulk cancel stops pending ones", async () => {
    const created = await fetch(`${t.url}/runs/batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { assistant_id: "agent", input: human("b1"), on_completion: "keep" },
        { assistant_id: "agent", input: human("b2"), on_completion: "keep" },
      ]),
    });
    expect(created.status).toBe(200);
    const runs = (await created.json()) as Array<{ run_id: string; thread_id: string }>;
    expect(runs).toHaveLength(2);
    for (const run of runs) await t.client.runs.join(run.thread_id, run.run_id);

    const thread = await t.client.threads.create();
    const first = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 10 } });
    const queued = await t.client.runs.create(thread.thread_id, "slow", { input: { steps: 1 } });
    await t.client.runs.cancelMany({ runIds: [first.run_id, queued.run_id] });
    await t.client.runs.join(thread.thread_id, first.run_id);
    expect((await t.client.runs.get(thread.thread_id, queued.run_id)).status).toBe("interrupted");
    expect((await t.client.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
  });
});
