import { afterEach, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/storage/database.ts";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { expectOneLine, expectRunLineWhole } from "../support/thread-history.ts";

/**
 * A state update (POST /threads/{id}/state), or a keep_latest prune, and a run created on
 * the same thread at the same moment. The update checks that no run is active, then writes its checkpoint; a run
 * queued in between used to start from the checkpoint before the update, so the thread's
 * history forked and the run's end hid the update. The run is created here right after
 * the update's check answered, wherever that check runs (a transaction or not).
 */
let running: TestAgentServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const ACTIVE_RUN_CHECK = /^SELECT 1 FROM runs WHERE thread_id = \$1 AND .* LIMIT 1$/s;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `after` (not awaited) the next time the active-run check answers, then lets the update go on after `pauseMs`. */
function afterNextActiveRunCheck(db: TestAgentServer["server"]["db"], after: () => void, pauseMs: number): void {
  let fired = false;
  const hook = (target: Queryable): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[]) => {
      const rows = await target.query<Row>(sql, params);
      if (!fired && ACTIVE_RUN_CHECK.test(sql)) {
        fired = true;
        after();
        await sleep(pauseMs);
      }
      return rows;
    },
  });
  const plain = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  db.query = (sql, params) => hook({ query: plain }).query(sql, params);
  db.transaction = (work) => transaction((tx) => work(hook(tx)));
}

describe.each(BACKENDS)("a state update and a run created at the same moment (%s)", (backend) => {
  it("never fork the thread: the run starts from the update's checkpoint", async () => {
    running = await startTestAgentServer(backend, { workers: 4 });
    const { client, server } = running;
    const thread = await client.threads.create({ graphId: "agent" });
    await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "first" }] } });

    let created: Promise<{ run_id: string }> | undefined;
    afterNextActiveRunCheck(
      server.db,
      () => {
        created = client.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "second" }] } });
      },
      300,
    );
    const updated = await client.threads.updateState(thread.thread_id, { values: { messages: [{ role: "ai", content: "edited by hand" }] } });
    expect(created).toBeDefined();
    const run = await created!;
    await client.runs.join(thread.thread_id, run.run_id);

    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.content)).toEqual(["first", "You said: first", "edited by hand", "second", "You said: second"]);
    // One line of checkpoints, newest first, each the parent of the one before it.
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expectOneLine(history);
    // The wire answer is {checkpoint: {...}} (the vendor's ThreadStateUpdateResponse); the SDK types it otherwise.
    const written = (updated as unknown as { checkpoint: { checkpoint_id: string } }).checkpoint.checkpoint_id;
    expect(written).toEqual(expect.any(String));
    expect(history.map((h) => h.checkpoint.checkpoint_id)).toContain(written);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  });

  it("still refuses an update while a run is active, and writes nothing of it", async () => {
    running = await startTestAgentServer(backend, { workers: 4 });
    const { client } = running;
    const thread = await client.threads.create({ graphId: "slow" });
    const run = await client.runs.create(thread.thread_id, "slow", { input: { messages: [{ role: "human", content: "wait" }], delay_ms: 2_000, steps: 1 } });
    await expect(client.threads.updateState(thread.thread_id, { values: { messages: [{ role: "ai", content: "refused" }] } })).rejects.toMatchObject({
      status: 409,
    });
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history.length).toBeGreaterThan(0);
    const contents = history.flatMap((h) => (h.values as { messages?: Array<{ content: string }> }).messages ?? []).map((m) => m.content);
    expect(contents).toContain("wait");
    expect(contents).not.toContain("refused");
  });

  it("prune keep_latest never removes the first checkpoints of a run created meanwhile", async () => {
    running = await startTestAgentServer(backend, { workers: 4 });
    const { client, server, url } = running;
    const thread = await client.threads.create({ graphId: "slow" });
    await client.runs.wait(thread.thread_id, "slow", { input: { messages: [{ role: "human", content: "first" }], delay_ms: 10, steps: 2 } });

    let created: Promise<{ run_id: string }> | undefined;
    afterNextActiveRunCheck(
      server.db,
      () => {
        created = client.runs.create(thread.thread_id, "slow", { input: { messages: [{ role: "human", content: "second" }], delay_ms: 400, steps: 2 } });
      },
      300,
    );
    const pruned = await fetch(`${url}/threads/prune`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ thread_ids: [thread.thread_id], strategy: "keep_latest" }),
    });
    expect(pruned.status).toBe(200);
    expect(await pruned.json()).toEqual({ pruned_count: 1 });
    expect(created).toBeDefined();
    const run = await created!;
    await client.runs.join(thread.thread_id, run.run_id);

    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    // The run's own line is whole: its input checkpoint, then one per step.
    expectRunLineWhole(history, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  });
});
