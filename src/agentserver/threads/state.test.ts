import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { BACKENDS } from "../../../test/support/backends.ts";
import { refreshThreadSnapshot } from "./snapshot.ts";
import { startThreadsApp, type ThreadsTestApp } from "./test-app.ts";

type Message = { type: string; content: string };
type Values = { messages: Message[] };
const hello = (text: string) => ({ messages: [{ role: "user", content: text }] });

/** A graph whose subgraph asks a human: its interrupt lives in a child checkpoint namespace. */
function nestedApproval() {
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("inner_ask", async () => ({ messages: [{ role: "ai", content: `inner: ${String(interrupt({ q: "inner?" }))}` }] }))
    .addEdge(START, "inner_ask")
    .compile();
  return new StateGraph(MessagesAnnotation).addNode("child", inner).addEdge(START, "child").compile();
}

describe.each(BACKENDS)("thread state API on %s", (backend) => {
  let t: ThreadsTestApp;
  beforeAll(async () => {
    t = await startThreadsApp(backend);
    t.graphs.register("nested_approval", nestedApproval());
  });
  afterAll(async () => t?.close());

  it("answers an empty state and history for a thread without a graph", async () => {
    const thread = await t.client.threads.create({});
    const state = await t.client.threads.getState(thread.thread_id);
    expect(state).toEqual({
      values: {},
      next: [],
      tasks: [],
      checkpoint: { thread_id: thread.thread_id, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null },
      metadata: null,
      created_at: null,
      parent_checkpoint: null,
      interrupts: [],
    });
    expect(await t.client.threads.getHistory(thread.thread_id)).toEqual([]);
    const [status, body] = await t.call("POST", `/threads/${thread.thread_id}/state`, { values: {} });
    expect(status).toBe(409);
    expect(body.detail).toMatch(/has no graph/);
  });

  it("reads the latest state, a state at a checkpoint, and history newest first", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", thread.thread_id, hello("one"));
    await t.invoke("agent", thread.thread_id, hello("two"));

    const state = await t.client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "one"],
      ["ai", "You said: one"],
      ["human", "two"],
      ["ai", "You said: two"],
    ]);
    expect(state.next).toEqual([]);
    expect(state.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: "" });
    expect(state.metadata).toMatchObject({ source: "loop" });
    expect(state.parent_checkpoint?.checkpoint_id).toBeTruthy();
    expect(typeof state.created_at).toBe("string");

    const history = await t.client.threads.getHistory<Values>(thread.thread_id, { limit: 100 });
    expect(history).toHaveLength(6); // per invoke: input, loop before the node, loop after it
    const ids = history.map((h) => h.checkpoint.checkpoint_id!);
    expect(ids[0]).toBe(state.checkpoint.checkpoint_id);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect(history[1].checkpoint.checkpoint_id).toBe(state.parent_checkpoint?.checkpoint_id);

    const page = await t.client.threads.getHistory(thread.thread_id, { limit: 2, before: { configurable: { checkpoint_id: ids[1] } } });
    expect(page.map((h) => h.checkpoint.checkpoint_id)).toEqual(ids.slice(2, 4));
    const [, byCheckpoint] = await t.call("POST", `/threads/${thread.thread_id}/history`, { limit: 1, before: { checkpoint_id: ids[0] } });
    expect(byCheckpoint.map((h: { checkpoint: { checkpoint_id: string } }) => h.checkpoint.checkpoint_id)).toEqual([ids[1]]);
    const [status, viaGet] = await t.call("GET", `/threads/${thread.thread_id}/history?limit=2&before=${ids[1]}`);
    expect(status).toBe(200);
    expect(viaGet.map((h: { checkpoint: { checkpoint_id: string } }) => h.checkpoint.checkpoint_id)).toEqual(ids.slice(2, 4));
    const inputs = await t.client.threads.getHistory(thread.thread_id, { metadata: { source: "input" } });
    expect(inputs.map((h) => h.checkpoint.checkpoint_id)).toEqual([ids[2], ids[5]]);

    const older = await t.client.threads.getState<Values>(thread.thread_id, ids[3]);
    expect(older.checkpoint.checkpoint_id).toBe(ids[3]);
    expect(older.values.messages.map((m) => m.content)).toEqual(["one", "You said: one"]);
    const viaPost = await t.client.threads.getState<Values>(thread.thread_id, { checkpoint_id: ids[3], checkpoint_ns: "" } as never);
    expect(viaPost.values).toEqual(older.values);
    const [missing, why] = await t.call("GET", `/threads/${thread.thread_id}/state/${randomUUID()}`);
    expect(missing).toBe(404);
    expect(why.detail).toMatch(/Checkpoint .* not found/);

    const selected = await t.client.threads.getState(thread.thread_id, undefined, { select: ["values.messages", "next"] });
    expect(Object.keys(selected).sort()).toEqual(["next", "values"]);
    expect(Object.keys(selected.values)).toEqual(["messages"]);
  });

  it("updates state as a node, forks from an older checkpoint, and refreshes the thread", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", thread.thread_id, hello("start"));
    const before = await t.client.threads.getState<Values>(thread.thread_id);

    // The SDK types the answer as a config; the server sends the vendor's {checkpoint}.
    type Updated = { checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } };
    const { checkpoint } = (await t.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: "ai", content: "edited by hand" }] },
      asNode: "agent",
    })) as unknown as Updated;
    expect(checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: "" });
    const after = await t.client.threads.getState<Values>(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(checkpoint.checkpoint_id);
    expect(after.values.messages.at(-1)?.content).toBe("edited by hand");
    const stored = await t.client.threads.get<Values>(thread.thread_id);
    expect(stored.values.messages.at(-1)?.content).toBe("edited by hand");
    expect(stored.status).toBe("idle");

    const fork = (await t.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: "ai", content: "fork" }] },
      asNode: "agent",
      checkpointId: before.checkpoint.checkpoint_id!,
    })) as unknown as Updated;
    const forked = await t.client.threads.getState<Values>(thread.thread_id, fork.checkpoint.checkpoint_id!);
    expect(forked.parent_checkpoint?.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(forked.values.messages.map((m) => m.content)).toEqual(["start", "You said: start", "fork"]);

    const [status, body] = await t.call("POST", `/threads/${thread.thread_id}/state`, { values: { messages: [] }, as_node: "nope" });
    expect(status).toBe(422);
    expect(body.detail).toMatch(/^as_node: .*nope/);

    const runId = randomUUID();
    await t.db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, status) VALUES ($1, $2, $3, 'running')`, [runId, thread.thread_id, randomUUID()]);
    const [busy] = await t.call("POST", `/threads/${thread.thread_id}/state`, { values: { messages: [] }, as_node: "agent" });
    expect(busy).toBe(409);
    await t.db.query(`DELETE FROM runs WHERE run_id = $1`, [runId]);
  });

  it("patches the metadata of the latest checkpoint in place", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", thread.thread_id, hello("meta"));
    const before = await t.client.threads.getState(thread.thread_id);
    const count = (await t.client.threads.getHistory(thread.thread_id, { limit: 100 })).length;

    await t.client.threads.patchState(thread.thread_id, { reviewed: true, by: "ada" });
    const after = await t.client.threads.getState(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.metadata).toEqual({ ...before.metadata, reviewed: true, by: "ada" });
    expect(after.values).toEqual(before.values);
    expect(after.parent_checkpoint).toEqual(before.parent_checkpoint);
    expect((await t.client.threads.getHistory(thread.thread_id, { limit: 100 })).length).toBe(count);

    const empty = await t.client.threads.create({});
    const [status] = await t.call("PATCH", `/threads/${empty.thread_id}/state`, { metadata: { x: 1 } });
    expect(status).toBe(404);
  });

  it("refreshThreadSnapshot sets idle, interrupted, error and busy", async () => {
    const idle = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", idle.thread_id, hello("fine"));
    expect(await t.client.threads.get(idle.thread_id)).toMatchObject({ status: "idle", interrupts: {}, error: null });

    const asking = await t.client.threads.create({ graphId: "approval" });
    await t.invoke("approval", asking.thread_id, hello("may I?"));
    const interrupted = await t.client.threads.get(asking.thread_id);
    expect(interrupted.status).toBe("interrupted");
    const state = await t.client.threads.getState(asking.thread_id);
    expect(state.next).toEqual(["ask"]);
    const taskId = state.tasks[0].id;
    expect(interrupted.interrupts).toEqual({ [taskId]: [{ id: expect.any(String), value: { question: "approve?" } }] });
    expect((state as unknown as { interrupts: unknown }).interrupts).toEqual(interrupted.interrupts[taskId]);
    expect(state.tasks[0].interrupts).toEqual(interrupted.interrupts[taskId]);
    // Where the task sits, as the vendor's ThreadState tells it.
    expect((state.tasks[0] as unknown as { path: unknown }).path).toEqual(["__pregel_pull", "ask"]);

    const failing = await t.client.threads.create({ graphId: "failing" });
    await t.invoke("failing", failing.thread_id, hello("boom"));
    const failed = await t.client.threads.get(failing.thread_id);
    expect(failed.status).toBe("error");
    expect(failed.error).toEqual({ error: "Error", message: "the graph failed on purpose" });
    const failedState = await t.client.threads.getState(failing.thread_id);
    expect(failedState.tasks[0]).toMatchObject({ name: "explode", error: "the graph failed on purpose" });

    await t.db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, status) VALUES ($1, $2, $3, 'pending')`, [randomUUID(), idle.thread_id, randomUUID()]);
    await refreshThreadSnapshot(t, idle.thread_id);
    expect((await t.client.threads.get(idle.thread_id)).status).toBe("busy");
    await t.db.query(`UPDATE runs SET status = 'success' WHERE thread_id = $1`, [idle.thread_id]);
    await refreshThreadSnapshot(t, idle.thread_id);
    expect((await t.client.threads.get(idle.thread_id)).status).toBe("idle");
    await refreshThreadSnapshot(t, randomUUID()); // a deleted thread: nothing to do, no error
  });

  it("shows subgraph states with subgraphs=true and reads a subgraph's history by namespace", async () => {
    const thread = await t.client.threads.create({ graphId: "nested_approval" });
    await t.invoke("nested_approval", thread.thread_id, hello("nested"));
    expect((await t.client.threads.get(thread.thread_id)).status).toBe("interrupted");

    const flat = await t.client.threads.getState(thread.thread_id);
    const task = flat.tasks[0];
    expect(task.name).toBe("child");
    expect(task.state).toBeNull();
    expect(task.checkpoint?.checkpoint_ns).toMatch(/^child:/);
    // The subgraph's checkpoint as LangGraph knows it: no null id or map (the vendor's shape).
    expect(task.checkpoint).toEqual({ thread_id: thread.thread_id, checkpoint_ns: task.checkpoint!.checkpoint_ns });
    expect((task as unknown as { path: unknown }).path).toEqual(["__pregel_pull", "child"]);
    expect((flat as unknown as { interrupts: unknown }).interrupts).toEqual([{ id: expect.any(String), value: { q: "inner?" } }]);

    const deep = await t.client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    const inner = deep.tasks[0].state as unknown as { next: string[]; checkpoint: { checkpoint_ns: string }; tasks: Array<{ name: string }> };
    expect(inner.next).toEqual(["inner_ask"]);
    expect(inner.checkpoint.checkpoint_ns).toBe(task.checkpoint?.checkpoint_ns);
    expect(inner.tasks[0].name).toBe("inner_ask");

    const subHistory = await t.client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_ns: task.checkpoint!.checkpoint_ns } } as never);
    expect(subHistory.length).toBeGreaterThan(0);
    expect(subHistory.every((h) => h.checkpoint.checkpoint_ns === task.checkpoint!.checkpoint_ns)).toBe(true);
  });

  it("reports the bytes a thread's checkpoints take", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", thread.thread_id, hello("weigh me"));
    const [status, body] = await t.call("GET", `/threads/${thread.thread_id}/storage`);
    expect(status).toBe(200);
    expect(body.thread_id).toBe(thread.thread_id);
    expect(body.checkpoints.count).toBe(3);
    expect(body.checkpoints.bytes).toBeGreaterThan(0);
    expect(body.channel_values.by_channel.messages.versions).toBeGreaterThanOrEqual(2);
    expect(body.total_bytes).toBe(body.checkpoints.bytes + body.channel_values.bytes + body.pending_writes.bytes);
  });
});
