import { afterEach, describe, expect, it } from "vitest";
import { enqueueRunFast } from "../../src/agentserver/runs/queue-repository.ts";
import type { RunKwargs } from "../../src/agentserver/runs/repository.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * A run claimed as it is queued may skip its first read of the thread only when the thread
 * is empty. On a PostgreSQL server the queueing statement's snapshot is older than the
 * thread's lock it waits for: a run that ended meanwhile, with its checkpoint, must not
 * make the next run start from an empty thread (two enqueued runs lost the first's
 * messages, about 1 in 5 on fresh servers).
 */
describe("starts_empty of a run queued while the thread's previous run ends (postgres)", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("is false when the run that held the thread committed a checkpoint while the queueing waited", async () => {
    const db = await openDatabase({ ...freshBackend("postgres", "startsempty"), component: "agent" });
    cleanup.push(() => db.close());
    const assistant = crypto.randomUUID();
    await db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')", [assistant]);
    const thread = crypto.randomUUID();
    const enqueue = (runId: string, newThread: boolean) =>
      enqueueRunFast(db, {
        run_id: runId,
        thread_id: thread,
        assistant_id: assistant,
        metadata: {},
        kwargs: { temporary: false } as RunKwargs,
        multitask_strategy: "enqueue",
        afterSeconds: 0,
        newThread,
        threadMetadata: {},
        assistantMetadata: {},
        claimFor: { workerId: "worker-test", leaseSeconds: 30 },
      });
    const first = crypto.randomUUID();
    expect(await enqueue(first, true)).toMatchObject({ run: { status: "running" }, startsEmpty: true });

    let second: ReturnType<typeof enqueue> | undefined;
    await db.transaction(async (tx) => {
      // The first run's end, as finish_run records it: under the thread's lock, with a checkpoint.
      await tx.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [thread]);
      await tx.query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint) VALUES ($1, '', '1ef00000-0000-6000-8000-000000000001', '{}')",
        [thread],
      );
      await tx.query("UPDATE runs SET status = 'success', lease_owner = NULL, lease_expires_at = NULL WHERE run_id = $1", [first]);
      // The next run is queued now: its statement starts, then waits for the lock held here.
      second = enqueue(crypto.randomUUID(), false);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const queued = await second!;
    expect(queued?.run.status).toBe("running");
    expect(queued?.startsEmpty).toBe(false);
  });
});
