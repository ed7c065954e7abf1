import { afterEach, describe, expect, it } from "vitest";
import type { RunRow } from "../../src/agentserver/runs/repository.ts";
import { WorkerPool } from "../../src/agentserver/runs/worker-pool.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { poolLifecycle } from "../support/pool-lifecycle.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * Runs claimed for a pool before it starts them (at their creation, or by the end of the
 * run before them on their thread): a cancel that comes in between reaches them, and a
 * pool that stopped meanwhile gives them back to the queue instead of starting them.
 */
describe.each(BACKENDS)("runs a worker pool holds before starting them (%s)", (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function setup() {
    const target = freshBackend(backend, "held");
    const db: Database = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, schema: target.schema, component: "agent" });
    cleanup.push(() => db.close());
    const started: Array<{ runId: string; aborted: boolean }> = [];
    const pool = new WorkerPool(
      db,
      poolLifecycle(db),
      async (run, control) => void started.push({ runId: run.run_id, aborted: control.signal.aborted }),
      { workers: 2, leaseSeconds: 30, exclusiveStorage: false },
      { warn: () => undefined, error: () => undefined },
    );
    cleanup.push(() => pool.stop(100));
    await pool.start();
    const assistant = crypto.randomUUID();
    await db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')", [assistant]);
    /** A run inserted as claimed for this pool, as migrations 0022 and 0023 claim them. */
    const claimedRun = async (): Promise<RunRow> => {
      const thread = crypto.randomUUID();
      await db.query("INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')", [thread]);
      const [row] = await db.query<RunRow>(
        `INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, status, attempt, lease_owner, lease_expires_at)
         VALUES ($1, $2, $3, '{}', 'running', 1, $4, now() + interval '30 seconds') RETURNING *`,
        [crypto.randomUUID(), thread, assistant, pool.workerId],
      );
      return row;
    };
    return { db, pool, started, claimedRun };
  }

  it("lets a cancel reach a run it holds, which then starts already aborted", async () => {
    const { pool, started, claimedRun } = await setup();
    const run = await claimedRun();
    pool.hold(run);
    pool.abortLocal(run.run_id);
    pool.adopt(run);
    await expect.poll(() => started.length).toBe(1);
    expect(started[0]).toEqual({ runId: run.run_id, aborted: true });
  });

  it("gives a run it holds back to the queue when it stopped before starting it", async () => {
    const { db, pool, started, claimedRun } = await setup();
    const run = await claimedRun();
    pool.hold(run);
    await pool.stop(100);
    pool.adopt(run);
    await expect
      .poll(
        async () => (await db.query<{ status: string; lease_owner: string | null }>("SELECT status, lease_owner FROM runs WHERE run_id = $1", [run.run_id]))[0],
      )
      .toEqual({ status: "pending", lease_owner: null });
    expect(started).toEqual([]);
  });
});
