import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { WorkerPool } from "../../src/agentserver/runs/worker-pool.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { poolLifecycle } from "../support/pool-lifecycle.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * The worker pool against a real database whose claim answers are held back on demand,
 * to replay races deterministically: a run announced while a claim that will come back
 * empty is still on its way must still be claimed.
 */
describe.each(BACKENDS)("worker pool races on %s", (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function setup(options: { leaseSeconds?: number; runMs?: number | ((attempt: number) => number) } = {}) {
    const target = freshBackend(backend, "pool");
    const db = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, schema: target.schema, component: "agent", poolSize: 4 });
    cleanup.push(() => db.close());
    let hold: Promise<void> | undefined;
    let renewalsFail = false;
    // The claim runs against the database at once; only its answer is delayed.
    const held: Database = {
      ...db,
      query: async (sql, params) => {
        if (renewalsFail && sql.includes("WITH mine")) throw new Error("renewal lost (test)");
        const rows = await db.query(sql, params);
        if (hold && sql.includes("WITH candidate")) await hold;
        return rows as never;
      },
    };
    const executed: string[] = [];
    const attempts: string[] = [];
    const pool = new WorkerPool(
      held,
      poolLifecycle(db),
      async (run) => {
        executed.push(run.run_id);
        attempts.push(`${run.run_id}:${run.attempt}`);
        const ms = typeof options.runMs === "function" ? options.runMs(run.attempt) : options.runMs;
        if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
        // An attempt that lost its lease does not record the end (the engine's is fenced).
        const [mine] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE run_id = $1 AND attempt = $2", [run.run_id, run.attempt]);
        if (!mine?.n) return;
        await db.query("UPDATE runs SET status = 'success', lease_owner = NULL WHERE run_id = $1", [run.run_id]);
      },
      { workers: 4, leaseSeconds: options.leaseSeconds ?? 30, exclusiveStorage: false },
      { warn: () => undefined, error: () => undefined },
    );
    cleanup.push(() => pool.stop(100));
    const assistant = crypto.randomUUID();
    await db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')`, [assistant]);
    const queueRun = async (threadId = crypto.randomUUID()) => {
      const runId = crypto.randomUUID();
      await db.query(`INSERT INTO threads (thread_id, status) VALUES ($1, 'busy') ON CONFLICT DO NOTHING`, [threadId]);
      await db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, kwargs) VALUES ($1, $2, $3, '{}')`, [runId, threadId, assistant]);
      await db.notify(runsChannel(db.schema), queueAnnouncement(runId, 0, threadId));
      return runId;
    };
    const holdClaims = () => {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    };
    const until = async (check: () => boolean, ms = 5_000) => {
      const end = Date.now() + ms;
      while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
      return check();
    };
    const failRenewals = (fail: boolean) => (renewalsFail = fail);
    return { db, pool, executed, attempts, queueRun, holdClaims, failRenewals, until };
  }

  it("claims a run announced while an empty claim was on its way", async () => {
    const { pool, executed, queueRun, holdClaims, until } = await setup();
    const release = holdClaims();
    await pool.start(); // its start-up claim finds nothing, and its answer is held
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await queueRun();
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect(await until(() => executed.includes(late))).toBe(true);
  });

  it("claims every run announced during slow claims", async () => {
    const { pool, executed, queueRun, holdClaims, until } = await setup();
    await pool.start();
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const release = holdClaims();
      runs.push(await queueRun());
      await new Promise((resolve) => setTimeout(resolve, 20));
      release();
    }
    expect(await until(() => runs.every((id) => executed.includes(id)))).toBe(true);
  });

  it("keeps renewing the lease of a run that finishes during a graceful stop", async () => {
    const { db, pool, executed, queueRun, until } = await setup({ leaseSeconds: 1, runMs: 2_500 });
    await pool.start();
    const runId = await queueRun();
    expect(await until(() => executed.includes(runId))).toBe(true);
    const stopping = pool.stop(5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    // Past the 1 s lease: only heartbeats during the grace period keep it ours.
    const [row] = await db.query<{ live: boolean }>("SELECT lease_expires_at > now() AS live FROM runs WHERE run_id = $1", [runId]);
    expect(row.live).toBe(true);
    await stopping;
  });

  it("announces a run whose lease expired, and renews the lease of its new attempt here while the old one finishes", async () => {
    // Attempt 1 outlives its lease (renewals fail meanwhile) and ends 1.5 s into attempt 2.
    const { db, pool, attempts, queueRun, failRenewals, until } = await setup({ leaseSeconds: 1, runMs: (attempt) => (attempt === 1 ? 3_000 : 4_000) });
    const announced: string[] = [];
    await db.listen(runsChannel(db.schema), (payload) => announced.push(payload.split(" ")[0]!));
    await pool.start();
    const runId = await queueRun();
    expect(await until(() => attempts.includes(`${runId}:1`))).toBe(true);
    failRenewals(true);
    expect(await until(() => attempts.includes(`${runId}:2`))).toBe(true);
    failRenewals(false);
    // The sweeper told every process (an announcement besides the one at creation).
    expect(await until(() => announced.filter((id) => id === runId).length >= 2)).toBe(true);
    // Attempt 1 ends meanwhile; attempt 2's lease must still be renewed past its 1 s.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const [row] = await db.query<{ attempt: number; live: boolean }>("SELECT attempt, lease_expires_at > now() AS live FROM runs WHERE run_id = $1", [runId]);
    expect(row).toEqual({ attempt: 2, live: true });
    expect(attempts.filter((a) => a.startsWith(runId))).toEqual([`${runId}:1`, `${runId}:2`]);
  });
});
