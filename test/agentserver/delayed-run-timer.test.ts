import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { WorkerPool } from "../../src/agentserver/runs/worker-pool.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { poolLifecycle } from "../support/pool-lifecycle.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * The pool's timer for delayed runs. A run delayed by more than setTimeout can hold
 * (2^31 - 1 ms, about 24.8 days; the API allows `after_seconds` up to 100 years): the
 * pool must wait, not ask the database in a loop because the timer fired at once. And
 * when asking the database for the next due time fails, the pool asks again.
 */
describe("a delayed run", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("delayed beyond what a timer holds is not claimed over and over while it waits", async () => {
    const target = freshBackend("pglite", "delay");
    const db = await openDatabase({ dataDir: target.dataDir, schema: target.schema, component: "agent" });
    cleanup.push(() => db.close());
    let claims = 0;
    const counted: Database = {
      ...db,
      query: async (sql, params) => {
        if (sql.includes("WITH candidate")) claims++;
        return db.query(sql, params);
      },
    };
    const pool = new WorkerPool(
      counted,
      poolLifecycle(db),
      async () => undefined,
      { workers: 2, leaseSeconds: 30, exclusiveStorage: true },
      { warn: () => undefined, error: () => undefined },
    );
    cleanup.push(() => pool.stop(100));
    await pool.start();
    const delay = 30 * 24 * 3600;
    const assistant = crypto.randomUUID();
    const thread = crypto.randomUUID();
    const run = crypto.randomUUID();
    await db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')", [assistant]);
    await db.query("INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')", [thread]);
    await db.query("INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, available_at) VALUES ($1, $2, $3, '{}', now() + make_interval(secs => $4))", [
      run,
      thread,
      assistant,
      delay,
    ]);
    const before = claims;
    await db.notify(runsChannel(db.schema), queueAnnouncement(run, delay, thread));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(claims - before).toBeLessThan(5);
  });

  it("is still claimed when looking up its due time failed once", async () => {
    const target = freshBackend("pglite", "delay");
    const db = await openDatabase({ dataDir: target.dataDir, schema: target.schema, component: "agent" });
    cleanup.push(() => db.close());
    // Queued before the pool starts: only the start-up lookup of the next due time knows of it.
    const assistant = crypto.randomUUID();
    const thread = crypto.randomUUID();
    const run = crypto.randomUUID();
    await db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')", [assistant]);
    await db.query("INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')", [thread]);
    await db.query("INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, available_at) VALUES ($1, $2, $3, '{}', now() + interval '2 seconds')", [
      run,
      thread,
      assistant,
    ]);
    let lookups = 0;
    const failingOnce: Database = {
      ...db,
      query: async (sql, params) => {
        if (sql.includes("min(available_at)") && lookups++ === 0) throw new Error("connection lost (test)");
        return db.query(sql, params);
      },
    };
    const warned: string[] = [];
    const executed: string[] = [];
    const pool = new WorkerPool(
      failingOnce,
      poolLifecycle(db),
      async (claimed) => void executed.push(claimed.run_id),
      { workers: 2, leaseSeconds: 30, exclusiveStorage: true },
      {
        warn: (_obj, msg) => void warned.push(msg),
        error: () => undefined,
      },
    );
    cleanup.push(() => pool.stop(100));
    await pool.start();
    const deadline = Date.now() + 10_000;
    while (!executed.includes(run) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(executed).toContain(run);
    expect(warned.filter((msg) => msg.includes("next delayed run"))).toHaveLength(lookups > 0 ? 1 : 0);
  });
});
