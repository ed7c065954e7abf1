import { describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { BACKENDS, type BackendName } from "../support/backends.ts";
import { serverPerTest } from "../support/agent-server.ts";
import { ai, contents, expectOneLine, human, settle } from "../support/thread-history.ts";

/**
 * POST /threads/{id}/state now runs in one transaction under the thread lock (decision
 * 0025). Every kind of update must answer as it did before (no statement left outside
 * the transaction, which PGlite would make wait forever), leave the thread's stored
 * snapshot equal to its state, and stay correct beside updates, deletes and runs of the
 * same thread at the same moment.
 */
const servers = serverPerTest();

async function start(backend: BackendName) {
  const running = await servers.start(backend, { workers: 2 });
  // No retries: a 500 must show as one, not as the answer of a second try.
  const client = new Client({ apiUrl: running.url, callerOptions: { maxRetries: 0 } });
  const update = (threadId: string, body: Record<string, unknown>) => settle((signal) => client.threads.updateState(threadId, { ...body, signal } as never));
  /** The thread's state, its stored snapshot and its history; the snapshot must agree with the state. */
  const observe = async (threadId: string) => {
    const state = await client.threads.getState(threadId);
    const thread = await client.threads.get(threadId);
    const history = await client.threads.getHistory(threadId, { limit: 100 });
    expect(thread.values).toEqual(state.values);
    expect(thread.status).toBe(state.next.length > 0 ? "interrupted" : "idle");
    return { state, thread, history, contents: contents(state.values) };
  };
  return { client, server: running.server, update, observe };
}

describe.each(BACKENDS)("every kind of state update answers from inside its transaction (%s)", (backend) => {
  it("subgraph namespaces, as_node, forks, special nodes and a thread without checkpoints", async () => {
    const { client, update, observe } = await start(backend);

    const nested = await client.threads.create({ graphId: "nested" });
    await client.runs.wait(nested.thread_id, "nested", { input: human("n") });
    expect((await update(nested.thread_id, { values: ai("in child"), checkpoint: { checkpoint_ns: "child" } })).status).toBe(200);
    expect((await observe(nested.thread_id)).contents).toEqual(["n", "from outer", "from subgraph"]);
    const nowhere = await update(nested.thread_id, { values: ai("nowhere"), checkpoint: { checkpoint_ns: "nope" } });
    expect(nowhere).toMatchObject({ status: 422, error: expect.stringContaining("names no subgraph") });
    expect((await update(nested.thread_id, { values: ai("as child"), asNode: "child" })).status).toBe(200);
    expect((await observe(nested.thread_id)).contents).toEqual(["n", "from outer", "from subgraph", "as child"]);

    const agent = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(agent.thread_id, "agent", { input: human("a") });
    expect((await update(agent.thread_id, { values: ai("as agent"), asNode: "agent" })).status).toBe(200);
    expect(await update(agent.thread_id, { values: ai("x"), asNode: "nope" })).toMatchObject({ status: 422 });
    const before = await observe(agent.thread_id);
    expect(before.contents).toEqual(["a", "You said: a", "as agent"]);
    const first = before.history[before.history.length - 1].checkpoint.checkpoint_id;
    expect((await update(agent.thread_id, { values: ai("forked"), checkpointId: first })).status).toBe(200);
    const forked = await observe(agent.thread_id);
    expect(forked.contents).toEqual(["forked"]);
    expect(forked.thread.status).toBe("interrupted");
    expect(forked.history[0].parent_checkpoint?.checkpoint_id).toBe(first);
    // A fork from a checkpoint the thread does not have is refused, and writes nothing.
    const unknown = "1f0c0000-0000-6000-8000-000000000000";
    expect(await update(agent.thread_id, { values: ai("nowhere"), checkpointId: unknown })).toMatchObject({ status: 422 });
    expect((await observe(agent.thread_id)).history.length).toBe(forked.history.length);
    expect((await update(agent.thread_id, { values: null, asNode: "__end__" })).status).toBe(200);
    expect((await update(agent.thread_id, { values: null, asNode: "__copy__" })).status).toBe(200);
    expect((await update(agent.thread_id, { values: human("as input"), asNode: "__input__" })).status).toBe(200);
    // Input waits in __start__'s channel until a run starts.
    const input = await observe(agent.thread_id);
    expect(input.contents).toEqual(["forked"]);
    expect(input.state.next).toEqual(["__start__"]);
    expect(input.state.metadata).toMatchObject({ source: "input" });

    const fresh = await client.threads.create({ graphId: "agent" });
    expect((await update(fresh.thread_id, { values: ai("first by hand") })).status).toBe(200);
    const seeded = await observe(fresh.thread_id);
    expect(seeded.contents).toEqual(["first by hand"]);
    expect(seeded.history).toHaveLength(1);
  });

  it("factory graphs, and an interrupted graph resumed after an update", async () => {
    const { client, update, observe } = await start(backend);
    const factory = await client.threads.create({ graphId: "factory" });
    await client.runs.wait(factory.thread_id, "factory", { input: human("f") });
    expect((await update(factory.thread_id, { values: ai("by hand") })).status).toBe(200);
    expect((await update(factory.thread_id, { values: ai("as reply"), asNode: "reply" })).status).toBe(200);
    expect((await observe(factory.thread_id)).contents).toEqual(["f", "from factory", "by hand", "as reply"]);

    const approval = await client.threads.create({ graphId: "approval" });
    await client.runs.wait(approval.thread_id, "approval", { input: human("please") });
    expect((await update(approval.thread_id, { values: human("context"), asNode: "__start__" })).status).toBe(200);
    const waiting = await observe(approval.thread_id);
    expect(waiting.state.next).toEqual(["ask"]);
    await client.runs.wait(approval.thread_id, "approval", { command: { resume: "yes" } });
    const done = await observe(approval.thread_id);
    expect(done.contents).toEqual(["please", "context", "answer: yes"]);
    expectOneLine(done.history);
  });

  it("answers 422 to values the graph's reducers refuse, and writes nothing", async () => {
    const { client, server, update, observe } = await start(backend);
    const thread = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(thread.thread_id, "agent", { input: human("a") });
    const before = await observe(thread.thread_id);
    const writes = async () =>
      (await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM checkpoint_writes WHERE thread_id = $1`, [thread.thread_id]))[0].n;
    const writesBefore = await writes();
    // Messages the messages reducer cannot coerce: a number, an unknown role, a null.
    for (const messages of [42, [{ role: "nope", content: "x" }], [null]]) {
      const refused = await update(thread.thread_id, { values: { messages } });
      expect(refused).toMatchObject({ status: 422, error: expect.stringContaining("values") });
    }
    const asNode = await update(thread.thread_id, { values: { messages: 42 }, asNode: "agent" });
    expect(asNode).toMatchObject({ status: 422, error: expect.stringContaining("values") });
    const after = await observe(thread.thread_id);
    expect(after.history).toHaveLength(before.history.length);
    expect(after.state.values).toEqual(before.state.values);
    expect(await writes()).toBe(writesBefore);
  });
});

describe.each(BACKENDS)("state updates beside other requests on the same thread (%s)", (backend) => {
  it("updates sent at once all land, one after another, on one line of history", async () => {
    const { client, update, observe } = await start(backend);
    const thread = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(thread.thread_id, "agent", { input: human("a") });
    // More than the PostgreSQL pool's connections (12 here): those waiting for the thread
    // lock hold one each, so the update holding the lock must need no other.
    const edits = Array.from({ length: 24 }, (_, i) => `e${i}`);
    const outcomes = await Promise.all(edits.map((edit) => update(thread.thread_id, { values: ai(edit), asNode: "agent" })));
    expect(outcomes.map((o) => o.status)).toEqual(edits.map(() => 200));
    const after = await observe(thread.thread_id);
    expect([...after.contents].sort()).toEqual(["You said: a", "a", ...edits].sort());
    expectOneLine(after.history);
  });

  it("an update and a delete at once: 200 or 404, and nothing of the thread is left", async () => {
    const { client, server, update } = await start(backend);
    for (let i = 0; i < 3; i++) {
      const thread = await client.threads.create({ graphId: "agent" });
      await client.runs.wait(thread.thread_id, "agent", { input: human("a") });
      const [updated, deleted] = await Promise.all([
        update(thread.thread_id, { values: ai("late") }),
        settle((signal) => client.threads.delete(thread.thread_id, { signal } as never)),
      ]);
      expect([200, 404]).toContain(updated.status);
      expect(deleted.status).toBe(200);
      expect(await settle(() => client.threads.get(thread.thread_id))).toMatchObject({ status: 404 });
      const [left] = await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1`, [thread.thread_id]);
      expect(left.n).toBe(0);
    }
  });

  it.each(["enqueue", "reject"] as const)("an update and a run created at once (multitask %s): no fork, no 500", async (strategy) => {
    const { client, update, observe } = await start(backend);
    const thread = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(thread.thread_id, "agent", { input: human("first") });
    for (let i = 0; i < 3; i++) {
      const [updated, created] = await Promise.all([
        update(thread.thread_id, { values: ai(`edit ${i}`) }),
        settle((signal) => client.runs.create(thread.thread_id, "agent", { input: human(`run ${i}`), multitaskStrategy: strategy, signal } as never)),
      ]);
      expect([200, 409]).toContain(updated.status);
      expect(created.status).toBe(200);
      await client.runs.join(thread.thread_id, (created.body as { run_id: string }).run_id);
      const after = await observe(thread.thread_id);
      expect(after.contents).toContain(`You said: run ${i}`);
      if (updated.status === 200) expect(after.contents).toContain(`edit ${i}`);
      expectOneLine(after.history);
    }
  });
});
