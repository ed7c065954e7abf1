import type { Database } from "../../storage/database.ts";
import type { StreamBroker } from "../stream/broker.ts";
import { queueAnnouncement, runsChannel } from "./announcements.ts";
import type { RunCompletion } from "./completion.ts";
import type { RunLifecycle } from "./lifecycle.ts";
import { toRun } from "./repository.ts";
import { sendWebhook, type WebhookPolicy } from "./webhook.ts";

export interface RunParts {
  db: Database;
  broker: StreamBroker;
  completion: RunCompletion;
  /** Resolves once the stream relay sent what it queued (PostgreSQL; see relay.ts `sent`). */
  relaySent?: () => Promise<void>;
  webhookPolicy: WebhookPolicy;
  log: { debug(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
}

/**
 * Who reacts to each step of a run, in order. This is the only place where a run's
 * queueing, hand-back and end are made known, in this process and to the others.
 */
export function subscribeRunParts(lifecycle: RunLifecycle, parts: RunParts): void {
  const { db, broker, completion, log } = parts;
  const announceQueued = (runId: string, delaySeconds: number, threadId: string, claimed = false) =>
    db.notify(runsChannel(db.schema), queueAnnouncement(runId, delaySeconds, threadId, claimed));

  // Its streams subscribe from now on; whichever worker claims it (here or elsewhere) feeds them.
  lifecycle.on("queued", ({ run }) => broker.follow(run.run_id, run.thread_id));
  // Workers of every process sharing the database (this one included) hear of it; thread
  // streams too, of a run claimed as it was queued, which workers then leave alone.
  lifecycle.on("queued", ({ run, delaySeconds, announced }) =>
    announced ? undefined : announceQueued(run.run_id, delaySeconds, run.thread_id, run.status === "running"),
  );

  lifecycle.on("claimed", ({ run }) => broker.open(run.run_id, run.thread_id, run.attempt));
  lifecycle.on("started", ({ run }) => log.debug({ run_id: run.run_id, attempt: run.attempt }, "run started"));

  // Waiters here first (with the result in hand), then this process's streams; followers
  // in other processes get the run's last events before they hear it ended.
  lifecycle.on("ended", ({ run, result }) => completion.settle(run.run_id, result));
  lifecycle.on("ended", ({ run }) => broker.end(run.run_id));
  if (parts.relaySent) lifecycle.on("ended", parts.relaySent);
  lifecycle.on("ended", ({ run }) => completion.announce(run.run_id));
  lifecycle.on("ended", ({ run, result, cause }) => {
    if (cause !== "finished" || !result || !run.kwargs.webhook) return;
    const record = { ...toRun({ ...run, status: result.status as typeof run.status, updated_at: new Date() }), values: result.values ?? null, error: result.error ?? null };
    // Delivery does not hold up the run's end: it is retried within sendWebhook and logged here.
    sendWebhook(run.kwargs.webhook, record, parts.webhookPolicy).catch((error) =>
      log.warn({ err: error, run_id: run.run_id }, "webhook delivery failed"),
    );
  });

  // Streams followed from other processes stay open for the next attempt.
  lifecycle.on("handedBack", ({ run }) => broker.end(run.run_id, { attempt: run.attempt, handedOver: true }));
  // Back in the queue: workers of other processes learn of it as of a new run (we are stopping).
  lifecycle.on("handedBack", ({ run, requeued }) => (requeued ? announceQueued(run.run_id, 0, run.thread_id) : undefined));
}
