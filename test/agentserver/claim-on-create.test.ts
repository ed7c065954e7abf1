import { afterEach, describe, expect, it } from "vitest";
import { runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

/**
 * A run created while a worker of the process is free and its thread is idle is claimed
 * by the statement that queues it (migration 0022): it comes back running, leased, on
 * its first attempt. Anything else is queued as before: a run behind another on its
 * thread, a delayed run, a run created while every worker is busy.
 */
describe.each(BACKENDS)("runs claimed as they are created (%s)", (backend) => {
  let agent: TestAgentServer | undefined;
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
  });

  /** Counts the agent's statements that contain `text`, from now until `stop()`. */
  function countStatements(text: string): { count: () => number; stop: () => void } {
    const db = agent!.server.db as { query: (sql: string, params?: unknown[]) => Promise<unknown[]> };
    const query = db.query.bind(db);
    let count = 0;
    db.query = (sql, params) => {
      if (sql.includes(text)) count++;
      return query(sql, params);
    };
    return { count: () => count, stop: () => void (db.query = query) };
  }

  const row = (runId: string) =>
    agent!.server.db
      .query<{ status: string; attempt: number; lease_owner: string | null }>("SELECT status, attempt, lease_owner FROM runs WHERE run_id = $1", [runId])
      .then((rows) => rows[0]);

  it("claims a run of an idle thread at once, queues the one behind it, and both run in order", async () => {
    agent = await startTestAgentServer(backend, { workers: 4 });
    const heard: string[] = [];
    await agent.server.db.listen(runsChannel(agent.server.db.schema), (payload) => heard.push(payload));
    const { client } = agent;
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 300 } });
    const second = await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 10 } });

    expect(first.status).toBe("running");
    const firstRow = await row(first.run_id);
    expect(firstRow.attempt).toBe(1);
    expect(firstRow.lease_owner).toMatch(/^worker-/);
    expect(second.status).toBe("pending");

    await client.runs.join(thread.thread_id, second.run_id);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([
      [second.run_id, "success"],
      [first.run_id, "success"],
    ]);
    // Other processes' thread streams hear of the claimed run; their workers are told it is taken.
    expect(heard).toContain(`${first.run_id} 0 ${thread.thread_id} claimed`);
    expect(heard).toContain(`${second.run_id} 0 ${thread.thread_id}`);
  });

  it("queues a delayed run, and a run created while every worker is busy", async () => {
    agent = await startTestAgentServer(backend, { workers: 1 });
    const { client } = agent;
    const busy = await client.threads.create();
    const holding = await client.runs.create(busy.thread_id, "slow", { input: { steps: 1, delay_ms: 400 } });
    expect(holding.status).toBe("running");

    const other = await client.threads.create();
    const waiting = await client.runs.create(other.thread_id, "slow", { input: { steps: 1, delay_ms: 10 } });
    expect(waiting.status).toBe("pending");
    const delayed = await client.runs.create((await client.threads.create()).thread_id, "slow", { input: { steps: 1, delay_ms: 10 }, afterSeconds: 1 });
    expect(delayed.status).toBe("pending");

    await client.runs.join(other.thread_id, waiting.run_id);
    expect((await row(waiting.run_id)).status).toBe("success");
    expect((await row(holding.run_id)).status).toBe("success");
    await client.runs.join(delayed.thread_id, delayed.run_id);
    expect((await row(delayed.run_id)).status).toBe("success");
  });

  it("takes each next run of a thread with the end of the one before, without a claim of its own", async () => {
    agent = await startTestAgentServer(backend, { workers: 4 });
    const { client } = agent;
    const claims = countStatements("WITH candidate");
    const thread = await client.threads.create();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 50 } }));
    await client.runs.join(thread.thread_id, created[4].run_id);
    const rows = await agent.server.db.query<{ run_id: string; status: string; attempt: number }>(
      "SELECT run_id, status, attempt FROM runs WHERE thread_id = $1 ORDER BY seq",
      [thread.thread_id],
    );
    expect(rows.map((r) => [r.run_id, r.status, r.attempt])).toEqual(created.map((r) => [r.run_id, "success", 1]));
    // At most the one that finds the thread's queue empty after the last run.
    expect(claims.count()).toBeLessThanOrEqual(1);
  });

  it("starts each run claimed by the end of the one before from the checkpoint that one ended on, without reading it", async () => {
    agent = await startTestAgentServer(backend, { workers: 4 });
    const { client } = agent;
    const reads = countStatements("checkpoint_tuple(");
    const thread = await client.threads.create();
    const created = [];
    // The first run is still working while the others are queued behind it: each later one is claimed by an end.
    created.push(await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 300, messages: [{ role: "human", content: "0" }] } }));
    for (let i = 1; i < 4; i++) {
      created.push(await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 5, messages: [{ role: "human", content: String(i) }] } }));
    }
    await client.runs.join(thread.thread_id, created[3].run_id);
    const readsByRuns = reads.count();
    reads.stop();
    const statuses = await Promise.all(created.map((r) => client.runs.get(thread.thread_id, r.run_id).then((run) => run.status)));
    expect(statuses).toEqual(["success", "success", "success", "success"]);
    // None read the thread's checkpoint: the first was claimed at creation on a thread with none.
    expect(readsByRuns).toBe(0);
    const state = await client.threads.getState<{ messages: Array<{ type: string; content: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => `${m.type}:${m.content}`)).toEqual(["0", "1", "2", "3"].flatMap((n) => [`human:${n}`, "ai:step left 0"]));
  });

  it("starts a run claimed at creation on a thread with no checkpoint without reading one, and reads it once there is one", async () => {
    agent = await startTestAgentServer(backend, { workers: 4 });
    const { client } = agent;
    const thread = await client.threads.create();
    const reads = countStatements("checkpoint_tuple(");
    const say = (content: string) => client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content }] } });
    await say("first");
    const readsOfFirst = reads.count();
    await say("second");
    const readsOfSecond = reads.count() - readsOfFirst;
    await client.runs.wait(null, "agent", { input: { messages: [{ role: "human", content: "stateless" }] } });
    const readsOfStateless = reads.count() - readsOfFirst - readsOfSecond;
    reads.stop();
    expect([readsOfFirst, readsOfSecond, readsOfStateless]).toEqual([0, 1, 0]);
    const state = await client.threads.getState<{ messages: Array<{ type: string; content: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => `${m.type}:${m.content}`)).toEqual(["human:first", "ai:You said: first", "human:second", "ai:You said: second"]);
  });

  it("claims a stateless run too, and waits for its result", async () => {
    agent = await startTestAgentServer(backend, { workers: 2 });
    const result = await agent.client.runs.wait(null, "agent", { input: { messages: [{ role: "human", content: "hi" }] } });
    expect(JSON.stringify(result)).toContain("hi");
  });
});
