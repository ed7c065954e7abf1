import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { BACKENDS } from "../support/backends.ts";

/**
 * Key order is kept (issue 25, item 8): what a client sends comes back, and reaches the
 * graph, in the order it was sent, as on the vendor's server. PostgreSQL's jsonb sorts
 * keys (shorter first), so `{"type","text"}` would come back as `{"text","type"}`. The
 * echo graph (test/fixtures/key-order) records what it was handed. Every object below
 * is in an order jsonb would change; JSON text is compared, since toEqual ignores order.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/key-order/langgraph.json", import.meta.url));

const PAYLOAD = { second: 2, first: 1, nested: { type: "text", text: "hi" }, content: [{ type: "text", text: "hi" }] };
const CONTEXT = { second: "context 2", first: "context 1", block: { type: "text", text: "context" } };
const STORE_VALUE = { type: "text", text: "stored", nested: { second: 2, first: 1 } };
const THREAD_METADATA = { second: "thread 2", first: "thread 1" };
const RUN_METADATA = { second: "run 2", first: "run 1" };
const CONFIGURABLE = { second: "conf 2", first: "conf 1" };
/** What the echo graph ends with for PAYLOAD: the graph's own keys in its order too. */
const ECHOED = {
  payload: PAYLOAD,
  seen: { payload: PAYLOAD, context: CONTEXT, configurable: CONFIGURABLE, metadata: RUN_METADATA, store: STORE_VALUE, answer: null },
};

/** Same JSON text: same keys, values and order. */
const expectSameOrder = (actual: unknown, expected: unknown) => expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
/** The client's keys of `value`, in the order they come. */
const clientKeys = (value: unknown) => Object.keys(value as object).filter((key) => key === "second" || key === "first");

describe.each(BACKENDS)("key order through the SDK (%s)", (backend) => {
  let server: TestAgentServer;
  let client: Client;
  let threadId: string;
  let runId: string;
  let waited: unknown;
  let hooks: Server;
  let hookUrl: string;
  const hookBodies: string[] = [];

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        hookBodies.push(body);
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
    hookUrl = `http://127.0.0.1:${(hooks.address() as { port: number }).port}/hook`;
    server = await startTestAgentServer(backend, { configPath: CONFIG, workers: 2, webhookAllowHosts: ["127.0.0.1"] });
    client = server.client;
    await client.store.putItem(["order"], "item", STORE_VALUE);
    const thread = await client.threads.create({ metadata: THREAD_METADATA });
    threadId = thread.thread_id;
    waited = await client.runs.wait(threadId, "echo", {
      input: { payload: PAYLOAD },
      context: CONTEXT,
      config: { configurable: CONFIGURABLE },
      metadata: RUN_METADATA,
    });
    runId = (await client.runs.list(threadId))[0]!.run_id;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    hooks?.closeAllConnections();
    await new Promise((resolve) => hooks?.close(resolve));
  });

  it("the graph gets input, context, configurable and metadata in the client's order; runs/wait returns its output as it made it", () => {
    expectSameOrder(waited, ECHOED);
  });

  it("join returns the thread's values in order", async () => {
    expectSameOrder(await client.runs.join(threadId, runId), ECHOED);
  });

  it("a run keeps its metadata and kwargs in order", async () => {
    for (const run of [await client.runs.get(threadId, runId), (await client.runs.list(threadId))[0]!]) {
      expect(clientKeys(run.metadata)).toEqual(["second", "first"]);
      const kwargs = (run as unknown as { kwargs: { input: unknown; context: unknown; config: { configurable: object } } }).kwargs;
      expectSameOrder(kwargs.input, { payload: PAYLOAD });
      expectSameOrder(kwargs.context, CONTEXT);
      expect(clientKeys(kwargs.config.configurable)).toEqual(["second", "first"]);
    }
  });

  it("a thread keeps its metadata and values in order, read, searched and as state", async () => {
    const thread = await client.threads.get(threadId);
    expect(clientKeys(thread.metadata)).toEqual(["second", "first"]);
    expectSameOrder(thread.values, ECHOED);
    const found = await client.threads.search({ metadata: { second: "thread 2" }, values: { payload: { first: 1 } } });
    expect(found.map((t) => t.thread_id)).toEqual([threadId]);
    expect(clientKeys(found[0]!.metadata)).toEqual(["second", "first"]);
    expectSameOrder(found[0]!.values, ECHOED);
    const state = await client.threads.getState(threadId);
    expectSameOrder(state.values, ECHOED);
    expect(clientKeys(state.metadata)).toEqual(["second", "first"]);
    const [latest] = await client.threads.getHistory(threadId, { limit: 1 });
    expect(clientKeys(latest!.metadata)).toEqual(["second", "first"]);
  });

  it("a thread's metadata patch keeps the stored order and appends new keys", async () => {
    const thread = await client.threads.create({ metadata: { second: 2, first: 1 } });
    const patched = await client.threads.update(thread.thread_id, { metadata: { third: { type: "text", text: "3" }, first: "one" } });
    expectSameOrder(patched.metadata, { second: 2, first: "one", third: { type: "text", text: "3" } });
    expectSameOrder((await client.threads.get(thread.thread_id)).metadata, patched.metadata);
  });

  it("a state update's values come back in order", async () => {
    const update = { payload: { type: "text", text: "updated", nested: { second: 2, first: 1 } } };
    await client.threads.updateState(threadId, { values: update, asNode: "echo" });
    const state = await client.threads.getState(threadId);
    expectSameOrder((state.values as { payload: unknown }).payload, update.payload);
  });

  it("an interrupt's value comes back in order", async () => {
    const thread = await client.threads.create();
    const asking = { ...PAYLOAD, ask: true };
    await client.runs.wait(thread.thread_id, "echo", { input: { payload: asking } });
    const interrupts = Object.values((await client.threads.get(thread.thread_id)).interrupts).flat();
    expect(interrupts).toHaveLength(1);
    expectSameOrder(interrupts[0]!.value, asking);
  });

  it("a stateless run's output comes back in order", async () => {
    const output = await client.runs.wait(null, "echo", { input: { payload: PAYLOAD }, context: CONTEXT });
    expectSameOrder((output as { seen: { payload: unknown; context: unknown } }).seen.payload, PAYLOAD);
    expectSameOrder((output as { seen: { context: unknown } }).seen.context, CONTEXT);
  });

  it("an assistant keeps config, context and metadata in order, read, searched and versioned", async () => {
    const config = { configurable: { second: 2, first: 1, block: { type: "text", text: "hi" } } };
    const created = await client.assistants.create({ graphId: "echo", config, context: CONTEXT, metadata: RUN_METADATA });
    const check = (assistant: { config: unknown; context?: unknown; metadata: unknown }) => {
      expectSameOrder(assistant.config, config);
      expectSameOrder(assistant.context, CONTEXT);
      expectSameOrder(assistant.metadata, RUN_METADATA);
    };
    check(created);
    check(await client.assistants.get(created.assistant_id));
    const found = await client.assistants.search({ metadata: { second: "run 2" } });
    expect(found.map((a) => a.assistant_id)).toEqual([created.assistant_id]);
    check(found[0]!);
    check((await client.assistants.getVersions(created.assistant_id))[0]!);
  });

  it("a store item's value comes back in order, read and searched", async () => {
    expectSameOrder((await client.store.getItem(["order"], "item"))!.value, STORE_VALUE);
    const { items } = await client.store.searchItems(["order"], { filter: { type: "text" } });
    expect(items).toHaveLength(1);
    expectSameOrder(items[0]!.value, STORE_VALUE);
  });

  it("a cron keeps its payload and metadata in order", async () => {
    const cron = await client.crons.createForThread(threadId, "echo", {
      schedule: "0 0 1 1 *",
      input: { payload: PAYLOAD },
      metadata: RUN_METADATA,
    });
    const [found] = await client.crons.search({ assistantId: "echo", threadId });
    expect(found?.cron_id).toBe(cron.cron_id);
    for (const shown of [cron, found!] as unknown as Array<{ payload: { input: unknown }; metadata?: unknown }>) {
      expectSameOrder(shown.payload.input, { payload: PAYLOAD });
    }
    expectSameOrder((found as unknown as { metadata: unknown }).metadata, RUN_METADATA);
  });

  it("a run's webhook carries its metadata, kwargs and values in order", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "echo", { input: { payload: PAYLOAD }, metadata: RUN_METADATA, webhook: hookUrl });
    await expect.poll(() => hookBodies.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const hook = JSON.parse(hookBodies.at(-1)!) as { metadata: object; kwargs: { input: unknown }; values: { seen: { payload: unknown; metadata: unknown } } };
    expect(clientKeys(hook.metadata)).toEqual(["second", "first"]);
    expectSameOrder(hook.kwargs.input, { payload: PAYLOAD });
    expectSameOrder(hook.values.seen.payload, PAYLOAD);
    expectSameOrder(hook.values.seen.metadata, RUN_METADATA);
  });

  it("a resumable run's kept stream replays in order", async () => {
    const run = await client.runs.create(threadId, "echo", { input: { payload: PAYLOAD }, streamMode: ["values"], streamResumable: true });
    await client.runs.join(threadId, run.run_id);
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.joinStream(threadId, run.run_id, { lastEventId: "-1", streamMode: ["values"] })) parts.push(part);
    const values = parts.filter((part) => part.event === "values");
    // This run sent no context, configurable or metadata of its own: the thread's metadata reaches the graph.
    expectSameOrder(values.at(-1)!.data, { ...ECHOED, seen: { ...ECHOED.seen, context: {}, configurable: {}, metadata: THREAD_METADATA } });
  });
});
