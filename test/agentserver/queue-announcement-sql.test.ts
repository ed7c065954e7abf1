import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, readQueueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { enqueueRunFast } from "../../src/agentserver/runs/queue-repository.ts";
import type { RunKwargs } from "../../src/agentserver/runs/repository.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * Migration 0022's enqueue_run announces the run it queues itself (pg_notify at commit):
 * what it sends must read as what `queueAnnouncement` would have written.
 */
describe.each(BACKENDS)("the announcement enqueue_run sends on %s", (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("reads back as the run, its delay, its thread and whether it was claimed", async () => {
    const target = freshBackend(backend, "announce");
    const db = await openDatabase({ ...target, component: "agent" });
    cleanup.push(() => db.close());
    const channel = runsChannel(db.schema);
    const heard: string[] = [];
    await db.listen(channel, (payload) => heard.push(payload));
    const assistant = crypto.randomUUID();
    await db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'n')", [assistant]);

    const enqueue = async (threadId: string, options: { newThread: boolean; afterSeconds: number; claim: boolean }) => {
      const runId = crypto.randomUUID();
      const queued = await enqueueRunFast(db, {
        run_id: runId,
        thread_id: threadId,
        assistant_id: assistant,
        metadata: {},
        kwargs: { temporary: false } as RunKwargs,
        multitask_strategy: "enqueue",
        afterSeconds: options.afterSeconds,
        newThread: options.newThread,
        threadMetadata: {},
        assistantMetadata: {},
        claimFor: options.claim ? { workerId: "worker-test", leaseSeconds: 30 } : undefined,
        announceOn: channel,
      });
      expect(queued?.run.run_id).toBe(runId);
      return { runId, claimed: queued!.run.status === "running" };
    };
    const busy = crypto.randomUUID();
    const later = crypto.randomUUID();
    const sent = [
      // Claimed as it is queued (a free worker, an idle new thread).
      { threadId: busy, delaySeconds: 0, ...(await enqueue(busy, { newThread: true, afterSeconds: 0, claim: true })) },
      // Behind it on the same thread: not claimable, announced plainly.
      { threadId: busy, delaySeconds: 0, ...(await enqueue(busy, { newThread: false, afterSeconds: 0, claim: true })) },
      // Delayed by a fraction of a second.
      { threadId: later, delaySeconds: 2.5, ...(await enqueue(later, { newThread: true, afterSeconds: 2.5, claim: false })) },
    ];
    expect(sent.map((s) => s.claimed)).toEqual([true, false, false]);

    const deadline = Date.now() + 5_000;
    while (heard.length < sent.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard.map(readQueueAnnouncement)).toEqual(sent);
    // Byte for byte what the one encoder writes.
    expect(heard).toEqual(sent.map((s) => queueAnnouncement(s.runId, s.delaySeconds, s.threadId, s.claimed)));
  });
});
