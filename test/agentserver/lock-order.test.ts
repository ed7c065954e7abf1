import { afterEach, describe, expect, it } from "vitest";
import { finishRunWithSnapshot } from "../../src/agentserver/runs/queue-repository.ts";
import { requestCancel } from "../../src/agentserver/runs/repository.ts";
import { lockThread } from "../../src/agentserver/threads/repository.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Lock order on a PostgreSQL server: every writer takes a thread's row lock before its
 * runs' rows. Run creation under "interrupt" locks the thread and then marks the running
 * run; a worker recording that run's end at the same moment must wait for the thread,
 * not hold the run and deadlock (the first version of finish_run did, error 40P01).
 */
describe("lock order between run creation and a run's end (PostgreSQL)", () => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it("records the end after the creating transaction commits, without a deadlock", async () => {
    const target = freshBackend("postgres", "locks");
    db = await openDatabase({ databaseUrl: target.databaseUrl, schema: target.schema, component: "agent", poolSize: 4 });
    const [assistant, thread, run] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')`, [assistant]);
    await db.query(`INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')`, [thread]);
    await db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, status, lease_owner, attempt) VALUES ($1, $2, $3, '{}', 'running', 'w1', 1)`, [
      run,
      thread,
      assistant,
    ]);
    const snapshot = { values: { done: true }, interrupts: {}, error: null, settledStatus: "idle", now: new Date() };
    let finishing: Promise<{ owned: boolean }> | undefined;
    await db.transaction(async (tx) => {
      expect(await lockThread(tx, thread)).toBeDefined();
      finishing = finishRunWithSnapshot(db!, { runId: run, threadId: thread, workerId: "w1", attempt: 1 }, { outcome: { status: "success" }, snapshot });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await requestCancel(tx, run, "interrupt")).toBeDefined();
    });
    expect((await finishing)?.owned).toBe(true);
    const [row] = await db.query<{ status: string; values: unknown }>(
      `SELECT r.status, t."values" FROM runs r JOIN threads t USING (thread_id) WHERE r.run_id = $1`,
      [run],
    );
    expect(row).toEqual({ status: "success", values: { done: true } });
  });
});
