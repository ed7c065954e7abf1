import { describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { BACKENDS, type BackendName } from "../support/backends.ts";
import { serverPerTest } from "../support/agent-server.ts";
import { SlipwaySaver } from "../../src/agentserver/checkpointer/saver.ts";
import { sweepExpiredThreads } from "../../src/agentserver/threads/index.ts";
import type { Database } from "../../src/storage/database.ts";
import { ai, contents, expectOneLine, expectRunLineWhole, human, settle } from "../support/thread-history.ts";

/**
 * A keep_latest prune runs in one transaction under the thread lock, beside deletes, runs
 * and the TTL sweep; a state update from a checkpoint the thread does not have answers 422.
 * Every call here must answer (never hang: PGlite has one connection) and never 500.
 */
const servers = serverPerTest();

async function start(backend: BackendName) {
  const running = await servers.start(backend, { workers: 2 });
  const client = new Client({ apiUrl: running.url, callerOptions: { maxRetries: 0 } });
  const url = running.url;
  const prune = (threadIds: string[], strategy?: string) =>
    settle(async (signal) => {
      const response = await fetch(`${url}/threads/prune`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(strategy ? { thread_ids: threadIds, strategy } : { thread_ids: threadIds }),
        signal,
      });
      const body = await response.json();
      if (response.status !== 200) throw Object.assign(new Error(JSON.stringify(body)), { status: response.status });
      return body;
    });
  const update = (threadId: string, body: Record<string, unknown>) => settle((signal) => client.threads.updateState(threadId, { ...body, signal } as never));
  const history = (threadId: string) => client.threads.getHistory(threadId, { limit: 100 });
  return { client, prune, update, history };
}

describe.each(BACKENDS)("keep_latest prune of several threads at once (%s)", (backend) => {
  it("prunes the idle ones, skips the busy and the missing, and answers as before", async () => {
    const { client, prune, history } = await start(backend);
    const idle = await Promise.all([0, 1].map(() => client.threads.create({ graphId: "agent" })));
    for (const thread of idle) {
      await client.runs.wait(thread.thread_id, "agent", { input: human("one") });
      await client.runs.wait(thread.thread_id, "agent", { input: human("two") });
    }
    const busy = await client.threads.create({ graphId: "slow" });
    await client.runs.wait(busy.thread_id, "slow", { input: { ...human("first"), delay_ms: 5, steps: 1 } });
    const busyBefore = await history(busy.thread_id);
    const run = await client.runs.create(busy.thread_id, "slow", { input: { ...human("second"), delay_ms: 300, steps: 3 } });
    const statesBefore = await Promise.all(idle.map((t) => client.threads.getState(t.thread_id)));
    const missing = "00000000-0000-4000-8000-000000000000";

    const ids = [idle[0].thread_id, busy.thread_id, missing, idle[1].thread_id, idle[0].thread_id];
    expect(await prune(ids, "keep_latest")).toEqual({ status: 200, body: { pruned_count: 2 } });

    for (const [i, thread] of idle.entries()) {
      const left = await history(thread.thread_id);
      expect(left).toHaveLength(1);
      expect(left[0].checkpoint.checkpoint_id).toBe(statesBefore[i].checkpoint.checkpoint_id);
      expect(contents((await client.threads.getState(thread.thread_id)).values)).toEqual(contents(statesBefore[i].values));
    }
    await client.runs.join(busy.thread_id, run.run_id);
    const busyAfter = await history(busy.thread_id);
    // Nothing of the busy thread's earlier history went.
    expect(busyAfter.slice(-busyBefore.length).map((h) => h.checkpoint.checkpoint_id)).toEqual(busyBefore.map((h) => h.checkpoint.checkpoint_id));
    // A second prune of an already pruned thread still counts it (nothing to drop, still pruned).
    expect(await prune([idle[0].thread_id], "keep_latest")).toEqual({ status: 200, body: { pruned_count: 1 } });
    // delete is unchanged: the missing id is skipped, the threads go.
    expect(await prune([idle[0].thread_id, missing, idle[1].thread_id])).toEqual({ status: 200, body: { pruned_count: 2 } });
    expect((await settle(() => client.threads.get(idle[0].thread_id))).status).toBe(404);
  });

  it("a prune and a delete of the same threads at the same moment both answer", async () => {
    const { client, prune, history } = await start(backend);
    const threads = await Promise.all([0, 1, 2, 3].map(() => client.threads.create({ graphId: "agent" })));
    for (const thread of threads) {
      await client.runs.wait(thread.thread_id, "agent", { input: human("one") });
      await client.runs.wait(thread.thread_id, "agent", { input: human("two") });
    }
    const ids = threads.map((t) => t.thread_id);
    const [pruned, ...deleted] = await Promise.all([prune(ids, "keep_latest"), ...ids.slice(0, 2).map((id) => settle(() => client.threads.delete(id)))]);
    expect(pruned.status).toBe(200);
    expect((pruned.body as { pruned_count: number }).pruned_count).toBeGreaterThanOrEqual(2);
    for (const outcome of deleted) expect([200, 404]).toContain(outcome.status);
    for (const id of ids.slice(2)) expect(await history(id)).toHaveLength(1);
  });

  it("many prunes and runs of one thread at the same moment never lose a run's line", async () => {
    const { client, prune, history } = await start(backend);
    const thread = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(thread.thread_id, "agent", { input: human("zero") });
    const outcomes = await Promise.all([
      ...[0, 1, 2, 3, 4].map(() => prune([thread.thread_id], "keep_latest")),
      settle(() => client.runs.wait(thread.thread_id, "agent", { input: human("one"), multitaskStrategy: "enqueue" })),
      settle(() => client.runs.wait(thread.thread_id, "agent", { input: human("two"), multitaskStrategy: "enqueue" })),
    ]);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 200 });
    expectOneLine(await history(thread.thread_id));
    expect(contents((await client.threads.getState(thread.thread_id)).values)).toEqual(expect.arrayContaining(["one", "two"]));
  });
});

describe.each(BACKENDS)("the TTL sweep's keep_latest and a run created at the same moment (%s)", (backend) => {
  it("never removes the first checkpoints of a run queued after the claim", async () => {
    const { client, server } = await servers.start(backend, { workers: 4 });
    const thread = await client.threads.create({ graphId: "slow", ttl: { strategy: "keep_latest", ttl: 60 } } as never);
    await client.runs.wait(thread.thread_id, "slow", { input: { ...human("first"), delay_ms: 10, steps: 2 } });

    // The sweep's database: right after the claim answers, a run is created, and the sweep goes on 300 ms later.
    let created: Promise<{ run_id: string }> | undefined;
    const db = Object.create(server.db) as Database;
    db.query = async <Row>(text: string, params?: readonly unknown[]) => {
      const rows = await server.db.query<Row>(text, params);
      if (!created && /^UPDATE threads SET expires_at/.test(text.trim()) && rows.length) {
        created = client.runs.create(thread.thread_id, "slow", { input: { ...human("second"), delay_ms: 400, steps: 2 } });
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      return rows;
    };
    db.transaction = (work) => server.db.transaction(work);
    const later = new Date(Date.now() + 2 * 3_600_000);
    const swept = await sweepExpiredThreads({ db, checkpointer: new SlipwaySaver(server.db) }, later);
    expect(created).toBeDefined();
    const run = await created!;
    await client.runs.join(thread.thread_id, run.run_id);

    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    expectRunLineWhole(history, run.run_id);
    // Skipped as busy: not counted, and tried again once the claim's lease has passed.
    expect(swept).toEqual({ deleted: 0, pruned: 0 });
  });
});

describe.each(BACKENDS)("a fork from a checkpoint the thread does not have (%s)", (backend) => {
  it("refuses another thread's checkpoint, names the field given, and still forks from its own", async () => {
    const { client, update, history } = await start(backend);
    const [mine, theirs] = await Promise.all([0, 1].map(() => client.threads.create({ graphId: "agent" })));
    await client.runs.wait(mine.thread_id, "agent", { input: human("mine") });
    await client.runs.wait(theirs.thread_id, "agent", { input: human("theirs") });
    const foreign = (await client.threads.getState(theirs.thread_id)).checkpoint.checkpoint_id!;
    const before = await history(mine.thread_id);

    const byId = await update(mine.thread_id, { values: ai("x"), checkpointId: foreign });
    expect(byId).toMatchObject({ status: 422, error: expect.stringContaining("checkpoint_id") });
    expect(byId.error).not.toContain("checkpoint.checkpoint_id");
    const byConfig = await update(mine.thread_id, { values: ai("x"), checkpoint: { checkpoint_id: foreign } });
    expect(byConfig).toMatchObject({ status: 422, error: expect.stringContaining("checkpoint.checkpoint_id") });
    expect(await history(mine.thread_id)).toHaveLength(before.length);
    expect(await history(theirs.thread_id)).toHaveLength((await history(theirs.thread_id)).length);

    const first = before.at(-1)!.checkpoint.checkpoint_id!;
    const forked = await update(mine.thread_id, { values: ai("forked"), checkpoint: { checkpoint_id: first } });
    expect(forked.status).toBe(200);
    const after = await history(mine.thread_id);
    expect(after[0].parent_checkpoint?.checkpoint_id).toBe(first);
  });

  it("a subgraph namespace with a checkpoint id works as before, and an unknown one writes nothing", async () => {
    const { client, update, history } = await start(backend);
    const thread = await client.threads.create({ graphId: "nested" });
    await client.runs.wait(thread.thread_id, "nested", { input: human("n") });
    // The child's checkpoints are stored under "child:<task id>"; the API lists the root's only.
    const stored = () =>
      servers.current!.server.db.query<{ checkpoint_ns: string; checkpoint_id: string }>(
        "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns <> '' ORDER BY checkpoint_id",
        [thread.thread_id],
      );
    const child = stored;
    const childBefore = await child();
    const rootBefore = await history(thread.thread_id);
    expect(childBefore.length).toBeGreaterThan(0);

    // A subgraph namespace alone updates the child (the existing test covers this too).
    expect((await update(thread.thread_id, { values: ai("in child"), checkpoint: { checkpoint_ns: "child" } })).status).toBe(200);
    const childAfter = await child();
    expect(childAfter.length).toBe(childBefore.length + 1);
    // A fork in the child's namespace from one of its own checkpoints still works.
    const own = childAfter[0];
    const fork = await update(thread.thread_id, {
      values: ai("child fork"),
      checkpoint: { checkpoint_ns: own.checkpoint_ns, checkpoint_id: own.checkpoint_id },
    });
    expect(fork.status).toBe(200);
    const childForked = await child();
    expect(childForked.length).toBe(childAfter.length + 1);

    // An unknown checkpoint id in the child's namespace must not answer 500, nor start a dangling line.
    const unknown = "1f0c0000-0000-6000-8000-000000000000";
    const outcome = await update(thread.thread_id, { values: ai("nowhere"), checkpoint: { checkpoint_ns: own.checkpoint_ns, checkpoint_id: unknown } });
    expect(outcome.status).not.toBe(500);
    expect(outcome.status).not.toBe(0);
    expect({ status: outcome.status, childCheckpoints: (await child()).length, rootCheckpoints: (await history(thread.thread_id)).length }).toEqual({
      status: 422,
      childCheckpoints: childForked.length,
      rootCheckpoints: rootBefore.length,
    });
  });
});
