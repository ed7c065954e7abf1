import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { sweepExpiredThreads } from "./sweep.ts";
import { startThreadsApp, type ThreadsTestApp } from "./test-app.ts";

const hello = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe.each(BACKENDS)("threads API on %s", (backend) => {
  let t: ThreadsTestApp;
  beforeAll(async () => {
    t = await startThreadsApp(backend);
  });
  afterAll(async () => t?.close());

  it("creates, gets, patches and deletes a thread through the SDK", async () => {
    const created = await t.client.threads.create({ metadata: { owner: "ada" }, graphId: "agent" });
    expect(created.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created).toMatchObject({ status: "idle", metadata: { owner: "ada", graph_id: "agent" }, values: null, interrupts: {} });
    expect(new Date(created.created_at).getTime()).toBeGreaterThan(0);

    const fetched = await t.client.threads.get(created.thread_id);
    expect(fetched).toEqual(created);

    const patched = await t.client.threads.update(created.thread_id, { metadata: { topic: "ships" } });
    expect(patched.metadata).toEqual({ owner: "ada", graph_id: "agent", topic: "ships" });
    expect(patched.created_at).toBe(created.created_at);

    await t.client.threads.delete(created.thread_id);
    await expect(t.client.threads.get(created.thread_id)).rejects.toThrow(/404/);
  });

  it("ensure() creates a missing thread once and leaves an existing one alone", async () => {
    const threadId = randomUUID();
    const made = await t.threads.ensure(threadId, { graph_id: "agent" });
    expect(made).toMatchObject({ thread_id: threadId, status: "idle", metadata: { graph_id: "agent" } });
    const again = await t.threads.ensure(threadId, { graph_id: "other" });
    expect(again.metadata).toEqual({ graph_id: "agent" });
    expect((await t.client.threads.get(threadId)).metadata).toEqual({ graph_id: "agent" });
  });

  it("patches with Prefer: return=minimal and answers 204", async () => {
    const thread = await t.client.threads.create({ metadata: { a: 1 } });
    const answer = await t.client.threads.update(thread.thread_id, { metadata: { b: 2 }, returnMinimal: true });
    expect(answer).toBeUndefined();
    expect((await t.client.threads.get(thread.thread_id)).metadata).toEqual({ a: 1, b: 2 });
  });

  it("honours if_exists: raise answers 409, do_nothing returns the existing thread", async () => {
    const threadId = randomUUID();
    const first = await t.client.threads.create({ threadId, metadata: { n: 1 } });
    expect(first.thread_id).toBe(threadId);
    const [status, body] = await t.call("POST", "/threads", { thread_id: threadId, metadata: { n: 2 } });
    expect(status).toBe(409);
    expect(body.detail).toContain(threadId);
    const again = await t.client.threads.create({ threadId, metadata: { n: 3 }, ifExists: "do_nothing" });
    expect(again).toEqual(first);
  });

  it("deleting a thread removes its runs and checkpoints and calls beforeDelete", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", thread.thread_id, hello("hi"));
    await t.db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, status) VALUES ($1, $2, $3, 'success')`, [
      randomUUID(),
      thread.thread_id,
      randomUUID(),
    ]);
    expect(await t.checkpointer.latestCheckpointMeta(thread.thread_id)).toBeDefined();
    await t.client.threads.delete(thread.thread_id);
    expect(t.deletedHookCalls.at(-1)).toBe(thread.thread_id);
    expect(await t.db.query("SELECT 1 FROM runs WHERE thread_id = $1", [thread.thread_id])).toHaveLength(0);
    expect(await t.checkpointer.latestCheckpointMeta(thread.thread_id)).toBeUndefined();
  });

  it("deletes the threads of an assistant with their checkpoints", async () => {
    const assistantId = randomUUID();
    const mine = await t.client.threads.create({ metadata: { assistant_id: assistantId }, graphId: "agent" });
    const other = await t.client.threads.create({ metadata: { assistant_id: randomUUID() } });
    await t.invoke("agent", mine.thread_id, hello("bye"));
    expect(await t.threads.deleteOfAssistant(assistantId)).toBe(1);
    await expect(t.client.threads.get(mine.thread_id)).rejects.toThrow(/404/);
    expect(await t.checkpointer.latestCheckpointMeta(mine.thread_id)).toBeUndefined();
    expect((await t.client.threads.get(other.thread_id)).thread_id).toBe(other.thread_id);
  });

  it("searches by metadata, values, status and ids, sorts, pages, selects and extracts", async () => {
    const tag = randomUUID();
    const a = await t.client.threads.create({ metadata: { tag, n: 1 }, graphId: "agent" });
    const b = await t.client.threads.create({ metadata: { tag, n: 2 }, graphId: "approval" });
    const c = await t.client.threads.create({ metadata: { tag, n: 3 } });
    await t.invoke("agent", a.thread_id, hello("first words"));
    await t.invoke("approval", b.thread_id, hello("please approve"));

    const all = await t.client.threads.search({ metadata: { tag } });
    expect(all.map((x) => x.thread_id)).toEqual([c.thread_id, b.thread_id, a.thread_id]);
    const oldestFirst = await t.client.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc", limit: 2, offset: 1 });
    expect(oldestFirst.map((x) => x.thread_id)).toEqual([b.thread_id, c.thread_id]);

    const interrupted = await t.client.threads.search({ metadata: { tag }, status: "interrupted" });
    expect(interrupted.map((x) => x.thread_id)).toEqual([b.thread_id]);
    const byIds = await t.client.threads.search({ ids: [a.thread_id, c.thread_id], sortBy: "thread_id", sortOrder: "asc" });
    expect(byIds.map((x) => x.thread_id)).toEqual([a.thread_id, c.thread_id].sort());
    const byValues = await t.client.threads.search({ metadata: { tag }, values: { messages: [{ content: "first words" }] } });
    expect(byValues.map((x) => x.thread_id)).toEqual([a.thread_id]);

    const projected = await t.client.threads.search({ ids: [a.thread_id], select: ["thread_id", "status"] });
    expect(projected).toEqual([{ thread_id: a.thread_id, status: "idle" }]);

    const [status, extracted] = await t.call("POST", "/threads/search", {
      ids: [a.thread_id],
      select: ["thread_id"],
      extract: { last: "values.messages[-1].content", who: "metadata.tag", nothing: "values.missing[3]" },
    });
    expect(status).toBe(200);
    expect(extracted).toEqual([{ thread_id: a.thread_id, extracted: { last: "You said: first words", who: tag, nothing: null } }]);

    expect(await t.client.threads.count({ metadata: { tag } })).toBe(3);
    expect(await t.client.threads.count({ metadata: { tag }, status: "idle" })).toBe(2);
    expect(await t.client.threads.count({ values: { messages: [{ content: "please approve" }] }, metadata: { tag } })).toBe(1);
  });

  it("copies a thread with its metadata, values and checkpoints", async () => {
    const source = await t.client.threads.create({ metadata: { who: "copier" }, graphId: "agent" });
    await t.invoke("agent", source.thread_id, hello("copy me"));
    const copy = await t.client.threads.copy(source.thread_id);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toEqual(source.metadata);
    const original = await t.client.threads.get(source.thread_id);
    expect(copy.values).toEqual(original.values);

    const [sourceState, copyState] = await Promise.all([t.client.threads.getState(source.thread_id), t.client.threads.getState(copy.thread_id)]);
    expect(copyState.values).toEqual(sourceState.values);
    expect(copyState.checkpoint.checkpoint_id).toBe(sourceState.checkpoint.checkpoint_id);
    expect(copyState.checkpoint.thread_id).toBe(copy.thread_id);
    const history = await t.client.threads.getHistory(copy.thread_id);
    expect(history.length).toBe((await t.client.threads.getHistory(source.thread_id)).length);

    // The copy lives on its own: new input there leaves the source as it was.
    await t.invoke("agent", copy.thread_id, hello("only in the copy"));
    expect((await t.client.threads.getState(source.thread_id)).values).toEqual(sourceState.values);
  });

  it("prunes threads: keep_latest keeps the latest state only, delete removes them", async () => {
    const kept = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", kept.thread_id, hello("one"));
    await t.invoke("agent", kept.thread_id, hello("two"));
    const before = await t.client.threads.getState(kept.thread_id);
    expect((await t.client.threads.getHistory(kept.thread_id)).length).toBeGreaterThan(1);

    const missing = randomUUID();
    expect(await t.client.threads.prune([kept.thread_id, missing], { strategy: "keep_latest" })).toEqual({ pruned_count: 1 });
    const history = await t.client.threads.getHistory(kept.thread_id);
    expect(history).toHaveLength(1);
    expect(history[0].checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect((await t.client.threads.getState(kept.thread_id)).values).toEqual(before.values);

    // keep_latest leaves a busy thread alone: its run is still writing checkpoints.
    const busy = await t.client.threads.create({ graphId: "agent" });
    await t.invoke("agent", busy.thread_id, hello("one"));
    await t.db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, status) VALUES ($1, $2, $3, 'running')`, [randomUUID(), busy.thread_id, randomUUID()]);
    expect(await t.client.threads.prune([busy.thread_id], { strategy: "keep_latest" })).toEqual({ pruned_count: 0 });
    expect((await t.client.threads.getHistory(busy.thread_id)).length).toBe(3);

    const doomed = await t.client.threads.create({});
    expect(await t.client.threads.prune([kept.thread_id, doomed.thread_id, missing])).toEqual({ pruned_count: 2 });
    await expect(t.client.threads.get(kept.thread_id)).rejects.toThrow(/404/);
    await expect(t.client.threads.get(doomed.thread_id)).rejects.toThrow(/404/);
  });

  it("stores a TTL, shows it with include=ttl, and sweeps expired threads by strategy", async () => {
    const doomed = await t.client.threads.create({ ttl: { ttl: 1 }, graphId: "agent" });
    const [status, body] = await t.call("POST", "/threads", { ttl: { ttl: 2, strategy: "keep_latest" }, metadata: { graph_id: "agent" } });
    expect(status).toBe(200);
    const trimmed = body.thread_id as string;
    await t.invoke("agent", trimmed, hello("one"));
    await t.invoke("agent", trimmed, hello("two"));

    type WithTtl = { ttl?: { strategy: string; ttl_minutes: number; expires_at: string } };
    const withTtl = (await t.client.threads.get(doomed.thread_id, { include: ["ttl"] })) as WithTtl;
    expect(withTtl.ttl).toMatchObject({ strategy: "delete", ttl_minutes: 1 });
    const expiresAt = new Date(withTtl.ttl!.expires_at).getTime();
    expect(expiresAt - Date.now()).toBeGreaterThan(30_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(60_000);
    expect(((await t.client.threads.get(doomed.thread_id)) as WithTtl).ttl).toBeUndefined();

    const patched = (await t.client.threads.update(trimmed, { ttl: { ttl: 2, strategy: "keep_latest" } as never })) as WithTtl;
    expect(patched.ttl).toMatchObject({ strategy: "keep_latest", ttl_minutes: 2 });
    expect(await sweepExpiredThreads(t, new Date())).toEqual({ deleted: 0, pruned: 0 });
    const later = new Date(Date.now() + 3 * 60_000);
    const result = await sweepExpiredThreads(t, later);
    expect(result.deleted).toBeGreaterThanOrEqual(1);
    expect(result.pruned).toBeGreaterThanOrEqual(1);
    await expect(t.client.threads.get(doomed.thread_id)).rejects.toThrow(/404/);
    expect(await t.client.threads.getHistory(trimmed)).toHaveLength(1);
    const next = (await t.client.threads.get(trimmed, { include: ["ttl"] })) as WithTtl;
    expect(new Date(next.ttl!.expires_at).getTime()).toBe(later.getTime() + 2 * 60_000);
    expect(await sweepExpiredThreads(t, later)).toEqual({ deleted: 0, pruned: 0 });
  });

  it("creates a thread from supersteps, all or nothing", async () => {
    const thread = await t.client.threads.create({
      graphId: "agent",
      supersteps: [
        // How a run writes it: the input, the __start__ node turning it into state, the node.
        { updates: [{ values: { messages: [{ role: "user", content: "q" }] }, asNode: "__input__" }] },
        { updates: [{ values: { messages: [{ role: "user", content: "q" }] }, asNode: "__start__" }] },
        { updates: [{ values: { messages: [{ role: "ai", content: "a" }] }, asNode: "agent" }] },
      ],
    });
    expect(thread.status).toBe("idle");
    const state = await t.client.threads.getState<{ messages: Array<{ type: string; content: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "q"],
      ["ai", "a"],
    ]);
    expect(state.next).toEqual([]);
    expect((await t.client.threads.getHistory(thread.thread_id)).map((h) => h.metadata?.source)).toEqual(["update", "update", "input"]);

    const threadId = randomUUID();
    const [status, body] = await t.call("POST", "/threads", {
      thread_id: threadId,
      metadata: { graph_id: "agent" },
      supersteps: [{ updates: [{ values: { messages: [] }, as_node: "no_such_node" }] }],
    });
    expect(status).toBe(422);
    expect(body.detail).toMatch(/^supersteps: .*no_such_node/);
    expect((await t.call("GET", `/threads/${threadId}`))[0]).toBe(404);

    const [noGraph, why] = await t.call("POST", "/threads", { supersteps: [{ updates: [{ values: {}, as_node: "agent" }] }] });
    expect(noGraph).toBe(422);
    expect(why.detail).toMatch(/^supersteps: need metadata.graph_id/);
  });
});
