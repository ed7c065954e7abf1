import { afterEach, describe, expect, it } from "vitest";
import { RunCompletion } from "../../src/agentserver/runs/completion.ts";
import { RunLifecycle } from "../../src/agentserver/runs/lifecycle.ts";
import { subscribeRunParts } from "../../src/agentserver/runs/lifecycle-listeners.ts";
import { claimNextRun } from "../../src/agentserver/runs/queue-repository.ts";
import type { RunCreate } from "../../src/agentserver/runs/schemas.ts";
import { RunService } from "../../src/agentserver/runs/service.ts";
import { StreamBroker } from "../../src/agentserver/stream/broker.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Double-texting against a worker: a run read as pending by the interrupt / rollback
 * strategy may be claimed by a worker (claims take no thread lock) before it is stopped.
 * It must then be stopped as a running run is (cancel requested), not reported
 * "interrupted" while it runs on, and not deleted under its worker. PostgreSQL only: the
 * claim has to run on another connection inside the creating transaction's window.
 */
describe.each(["interrupt", "rollback"] as const)("%s of a run claimed meanwhile (PostgreSQL)", (strategy) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("asks the worker to stop it and keeps its waiters waiting", async () => {
    const target = freshBackend("postgres", "race");
    const base = await openDatabase({ databaseUrl: target.databaseUrl, schema: target.schema, component: "agent", poolSize: 4 });
    cleanup.push(() => base.close());
    let claimInWindow = false;
    // The real database; while the flag is up, a worker claims right after the creating
    // transaction has read the thread's active runs.
    const db: Database = {
      ...base,
      transaction: (work) =>
        base.transaction((tx) =>
          work({
            query: async (sql, params) => {
              const rows = await tx.query(sql, params);
              if (claimInWindow && sql.includes("status IN ('pending', 'running') ORDER BY seq")) {
                claimInWindow = false;
                expect(await claimNextRun(base, "other-worker", 30)).toBeDefined();
              }
              return rows as never;
            },
          }),
        ),
    };
    const completion = new RunCompletion(db);
    await completion.start();
    const assistantId = crypto.randomUUID();
    await base.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')`, [assistantId]);
    const aborted: string[] = [];
    const log = { debug: () => undefined, warn: (obj: unknown, msg: string) => console.warn(msg, obj) };
    const lifecycle = new RunLifecycle(log);
    subscribeRunParts(lifecycle, {
      db,
      broker: new StreamBroker(),
      completion,
      webhookPolicy: { allowHosts: [], onlyAllowed: false },
      sendWebhooks: true,
      log,
    });
    const runs = new RunService({
      db,
      lifecycle,
      completion,
      assistants: { forRun: async () => ({ assistant: { assistant_id: assistantId, graph_id: "g", config: {}, context: {} } }) },
      refreshThread: async () => undefined,
      abortLocal: (runId) => aborted.push(runId),
      webhookPolicy: { allowHosts: [], onlyAllowed: false },
      newId: () => crypto.randomUUID(),
    });
    const threadId = crypto.randomUUID();
    await base.query(`INSERT INTO threads (thread_id, status) VALUES ($1, 'idle')`, [threadId]);
    const first = await runs.createAndWait(threadId, { assistant_id: assistantId } as RunCreate, { onDisconnect: "continue" }, new AbortController().signal);

    claimInWindow = true;
    await runs.create(threadId, { assistant_id: assistantId, multitask_strategy: strategy } as RunCreate, { onDisconnect: "continue" });
    expect(claimInWindow).toBe(false);

    const [row] = await base.query<{ status: string; cancel_action: string | null }>("SELECT status, cancel_action FROM runs WHERE run_id = $1", [
      first.run.run_id,
    ]);
    expect(row).toEqual({ status: "running", cancel_action: strategy });
    expect(aborted).toContain(first.run.run_id);
    const settled = await Promise.race([first.ended.then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 300))]);
    expect(settled).toBe("waiting");
  });
});
