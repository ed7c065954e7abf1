import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { WorkerPool } from "../../src/agentserver/runs/worker-pool.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { poolLifecycle } from "../support/pool-lifecycle.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * The pool's memory bound: above its heap fraction it claims no further run while one
 * executes, yet always claims one when none does, so a full heap never stalls the queue.
 * (A fraction of 0 stands for a heap that is always "full".)
 */
describe.each(BACKENDS)("worker pool heap bound on %s", (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function setup(heapFraction: number) {
    const target = freshBackend(backend, "heap");
    const db = await openDatabase({ ...target, component: "agent", poolSize: 4 });
    cleanup.push(() => db.close());
    let running = 0;
    let peak = 0;
    const finished: string[] = [];
    const gates: Array<() => void> = [];
    const pool = new WorkerPool(
      db,
      poolLifecycle(db),
      async (run) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        await db.query("UPDATE runs SET status = 'success', lease_owner = NULL WHERE run_id = $1", [run.run_id]);
        finished.push(run.run_id);
      },
      { workers: 10, heapFraction, leaseSeconds: 30, exclusiveStorage: false },
      { warn: () => undefined, error: () => undefined },
    );
    cleanup.push(() => pool.stop(100));
    await pool.start();
    const assistant = crypto.randomUUID();
    await db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')`, [assistant]);
    const queueRun = async () => {
      const runId = crypto.randomUUID();
      const threadId = crypto.randomUUID();
      await db.query(`INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')`, [threadId]);
      await db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, kwargs) VALUES ($1, $2, $3, '{}')`, [runId, threadId, assistant]);
      await db.notify(runsChannel(db.schema), queueAnnouncement(runId, 0, threadId));
    };
    const until = async (check: () => boolean, ms = 10_000) => {
      const end = Date.now() + ms;
      while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
      return check();
    };
    const releaseAll = () => {
      for (const open of gates.splice(0)) open();
    };
    return { queueRun, until, releaseAll, finished, peak: () => peak, running: () => running };
  }

  it("runs one at a time while the heap is over its bound, and still runs them all", async () => {
    const t = await setup(0);
    for (let i = 0; i < 3; i++) await t.queueRun();
    for (let done = 1; done <= 3; done++) {
      expect(await t.until(() => t.running() === 1)).toBe(true);
      // Give the pool every chance to claim a second run before this one ends.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(t.running()).toBe(1);
      t.releaseAll();
      expect(await t.until(() => t.finished.length === done)).toBe(true);
    }
    expect(t.peak()).toBe(1);
  });

  it("runs them side by side under the bound", async () => {
    const t = await setup(1);
    for (let i = 0; i < 3; i++) await t.queueRun();
    expect(await t.until(() => t.running() === 3)).toBe(true);
    t.releaseAll();
    expect(await t.until(() => t.finished.length === 3)).toBe(true);
  });
});
