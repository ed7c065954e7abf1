import type { Database } from "../../storage/database.ts";
import type { RunChannels } from "../stream/run-streams.ts";
import { queueAnnouncement, runsChannel } from "./announcements.ts";
import type { RunCompletion } from "./completion.ts";
import type { RunLifecycle } from "./lifecycle.ts";
import { toRun } from "./repository.ts";
import { sendWebhook, type WebhookPolicy } from "./webhook.ts";

export interface RunParts {
  db: Database;
  broker: RunChannels;
  completion: RunCompletion;
  /** Resolves once the stream relay sent what it queued (PostgreSQL; see relay.ts `sent`). */
  relaySent?: () => Promise<void>;
  webhookPolicy: WebhookPolicy;
  /** False under langgraph.json's `http.disable_webhooks`. */
  sendWebhooks: boolean;
  log: { debug(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
}

/**
 * Who reacts to each step of a run, in order. Every run's queueing, hand-back and end
 * goes through the lifecycle, and is made known from here, in this process and to the
 * others; the one exception is an announcement that the queueing transaction sent
 * itself at its commit (`queued` with `announced`).
 */
export function subscribeRunParts(lifecycle: RunLifecycle, parts: RunParts): void {
  const { broker, completion, log } = parts;

  // Its streams subscribe from now on; whichever worker claims it (here or elsewhere) feeds them.
  lifecycle.on("queued", ({ run }) => broker.follow(run.run_id, run.thread_id));

  lifecycle.on("claimed", ({ run }) => broker.open(run.run_id, run.thread_id, run.attempt));
  lifecycle.on("started", ({ run }) => log.debug({ run_id: run.run_id, attempt: run.attempt }, "run started"));

  // Waiters here first (with the result in hand), then this process's streams; followers
  // in other processes get the run's last events before they hear it ended.
  lifecycle.on("ended", ({ run, result }) => completion.settle(run.run_id, result));
  lifecycle.on("ended", ({ run }) => broker.end(run.run_id));
  if (parts.relaySent) lifecycle.on("ended", parts.relaySent);
  lifecycle.on("ended", ({ run }) => completion.announce(run.run_id));
  lifecycle.on("ended", ({ run, result, cause }) => {
    if (cause !== "finished" || !result || !run.kwargs.webhook || !parts.sendWebhooks) return;
    const record = {
      ...toRun({ ...run, status: result.status as typeof run.status, updated_at: new Date() }),
      values: result.values ?? null,
      error: result.error ?? null,
    };
    // Delivery does not hold up the run's end: it is retried within sendWebhook and logged here.
    sendWebhook(run.kwargs.webhook, record, parts.webhookPolicy).catch((error) => log.warn({ err: error, run_id: run.run_id }, "webhook delivery failed"));
  });

  // Streams followed from other processes stay open for the next attempt. A swept attempt
  // was not let go here (or is still running here, and will say so itself). A failed
  // attempt's readers here stay too, for the attempt the sweeper gives the run next.
  lifecycle.on("handedBack", ({ run, swept, failed }) => {
    if (failed) broker.release(run.run_id, run.attempt);
    else if (!swept) broker.end(run.run_id, { attempt: run.attempt, handedOver: true });
  });

  announceQueueChanges(lifecycle, parts.db);
}

/**
 * What the workers of every process sharing the database (this one included) hear of
 * the queue, and thread streams with them (run-feed.ts): a new run, a run back in the
 * queue, and a thread whose queue moved because a run that never started was stopped.
 * Subscribed after the other listeners, so each event reaches this process's parts first.
 */
export function announceQueueChanges(lifecycle: RunLifecycle, db: Database): void {
  const announce = (runId: string, delaySeconds: number, threadId: string, claimed = false) =>
    db.notify(runsChannel(db.schema), queueAnnouncement(runId, delaySeconds, threadId, claimed));

  // A run claimed as it was queued is announced too: thread streams follow it, workers leave it alone.
  lifecycle.on("queued", ({ run, delaySeconds, announced }) =>
    announced ? undefined : announce(run.run_id, delaySeconds, run.thread_id, run.status === "running"),
  );
  // Stopped before it started (its row still says pending): runs queued behind it may be
  // claimable now, and it may have been a delayed run whose timer was their next wake-up.
  lifecycle.on("ended", ({ run, cause }) => (cause === "stopped" && run.status === "pending" ? announce("-", 0, run.thread_id) : undefined));
  // Back in the queue: workers of every process learn of it as of a new run.
  lifecycle.on("handedBack", ({ run, requeued }) => (requeued ? announce(run.run_id, 0, run.thread_id) : undefined));
}
