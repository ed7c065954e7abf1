import type { Database } from "../../storage/database.ts";
import type { GraphRegistry } from "../graphs/registry.ts";
import type { RunCompletion, RunResult } from "../runs/completion.ts";
import type { StreamBroker } from "../stream/broker.ts";
import type { AssistantHandoff } from "./assistant-handoff.ts";
import { executeRun, type RunAssistant } from "./executor.ts";
import type { SnapshotWrite } from "../threads/repository.ts";
import { queueAnnouncement, runsChannel } from "./announcements.ts";
import { cancelActionOf, deleteRun, finishRunWithSnapshot, runEndOf, saveRunResult, toRun, type RunRow } from "./repository.ts";

/** Attempts after which a run that keeps failing to finish ends in error. */
export const MAX_RUN_ATTEMPTS = 5;
import { deleteThreadRow, threadValues } from "./thread-queue.ts";
import { sendWebhook, type WebhookPolicy } from "./webhook.ts";
import { persistRunEvents } from "./run-events.ts";

export interface RunEngineDeps {
  db: Database;
  graphs: GraphRegistry;
  broker: StreamBroker;
  completion: RunCompletion;
  assistants: { get(idOrGraphId: string): Promise<RunAssistant> };
  checkpointer: {
    latestCheckpointMeta(threadId: string): Promise<{ checkpoint_id: string; metadata: Record<string, unknown> } | undefined>;
    deleteCheckpointsOfRun(threadId: string, runId: string): Promise<unknown>;
    deleteThread(threadId: string): Promise<void>;
  };
  /** Computes the thread's snapshot after a run (undefined: thread gone). */
  snapshotOf(threadId: string, outcome?: { runError?: unknown }): Promise<SnapshotWrite | undefined>;
  /** Rewrites the thread's snapshot; returns the values written (undefined: thread gone). */
  refreshThread(threadId: string, outcome?: { runError?: unknown }): Promise<{ values: unknown } | undefined>;
  webhookPolicy: WebhookPolicy;
  /** Resolves once the stream relay sent what it queued (PostgreSQL; see relay.ts `sent`). */
  relaySent?: () => Promise<void>;
  /** Assistants of runs created in this process (saves reading them again). */
  handoff?: AssistantHandoff;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

/**
 * Takes one claimed run from start to its recorded end: stream events, final status,
 * thread snapshot, waiters, webhook, and removal of a stateless run's thread.
 */
export function createRunProcessor(deps: RunEngineDeps) {
  return async function processRun(run: RunRow, control: { signal: AbortSignal; workerId: string }): Promise<void> {
    const { broker } = deps;
    broker.open(run.run_id, run.thread_id, run.attempt);
    const events: Array<{ id: number; event: string; data: unknown }> = [];
    const emit = (event: string, data: unknown) => {
      const record = broker.publish(run.run_id, event, data, run.attempt);
      if (record && run.kwargs.stream_resumable) events.push(record);
    };
    emit("metadata", { run_id: run.run_id, attempt: run.attempt });

    // A run retried this often (each retry follows a crash or an end that could not be
    // recorded) would loop for ever: it ends in error instead.
    if (run.attempt > MAX_RUN_ATTEMPTS) {
      const message = `the run was started ${run.attempt - 1} times without its end being recorded; giving up`;
      await finish(run, control, { status: "error", error: { error: "RunAttemptsExceeded", message } }, emit, events);
      return;
    }

    let assistant: RunAssistant;
    try {
      assistant = deps.handoff?.take(run.run_id) ?? (await deps.assistants.get(run.assistant_id));
    } catch (error) {
      await finish(run, control, { status: "error", error: { error: "AssistantNotFound", message: (error as Error).message } }, emit, events);
      return;
    }
    const resumeFromCheckpoint = run.attempt > 1 && (await wroteCheckpoint(deps, run));
    const outcome = await executeRun({ graphs: deps.graphs, assistant, run, signal: control.signal, emit, resumeFromCheckpoint });

    if (outcome.status === "cancelled") {
      const action = await cancelActionOf(deps.db, run.run_id);
      if (action === undefined) {
        // The run (or its thread) was deleted while executing.
        return tellEnded(run, undefined);
      }
      if (action === null) {
        // Aborted by shutdown, not by a client: hand it back to the queue.
        await deps.db.query(
          `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL WHERE run_id = $1 AND lease_owner = $2 AND attempt = $3`,
          [run.run_id, control.workerId, run.attempt],
        );
        // Streams followed from other processes stay open for the next attempt.
        broker.end(run.run_id, { attempt: run.attempt, handedOver: true });
        // Workers of other processes learn of it as of a new run (we are stopping).
        await deps.db.notify(runsChannel(deps.db.schema), queueAnnouncement(run.run_id, 0, run.thread_id)).catch(() => undefined);
        return;
      }
      if (action === "rollback") {
        await deps.checkpointer.deleteCheckpointsOfRun(run.thread_id, run.run_id);
        await deleteRun(deps.db, run.run_id);
        await deps.refreshThread(run.thread_id).catch((e) => deps.log.warn({ err: e }, "thread refresh failed"));
        return tellEnded(run, { run_id: run.run_id, status: "interrupted" });
      }
      await finish(run, control, { status: "interrupted" }, emit, events);
      return;
    }
    await finish(run, control, outcome.status === "success" ? { status: "success", values: outcome.values } : outcome, emit, events);
  };

  /**
   * Records the run's end (fenced by worker and attempt) with the thread's snapshot.
   * A passing database error (a serialization failure, a dropped connection) gets a few
   * tries; a try that reports "not ours" after an earlier one failed reads the row back,
   * since that earlier write may have landed with its answer lost. If the snapshot is
   * what the database refuses (say a NUL character in the values), the end is recorded
   * without it. If nothing works the error goes up: the run leaves the pool, its lease is
   * no longer renewed, and the sweeper gives it another attempt (up to MAX_RUN_ATTEMPTS).
   */
  async function recordEnd(
    run: RunRow,
    workerId: string,
    outcome: { status: RunRow["status"]; error?: unknown },
    snapshot: SnapshotWrite | undefined,
  ): Promise<"ours" | "taken" | "gone"> {
    const fence = { workerId, attempt: run.attempt };
    const target = { runId: run.run_id, threadId: run.thread_id };
    let failure: unknown;
    for (const [index, delayMs] of [0, 50, 250, 1000].entries()) {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const withSnapshot = index < 3 ? snapshot : undefined;
      try {
        if (await finishRunWithSnapshot(deps.db, target, fence, outcome, withSnapshot)) return "ours";
        const row = await runEndOf(deps.db, run.run_id);
        if (!row) return "gone";
        const landed = failure !== undefined && row.attempt === run.attempt && row.lease_owner === null && row.status === outcome.status;
        return landed ? "ours" : "taken";
      } catch (error) {
        failure = error;
        deps.log.warn({ err: error, run_id: run.run_id, try: index + 1 }, "recording the run's end failed");
      }
    }
    throw failure;
  }

  /** Tells of the run's end: waiters here, its streams, then (after the relay sent its tail) other processes. */
  async function tellEnded(run: RunRow, result: RunResult | undefined): Promise<void> {
    deps.completion.settle(run.run_id, result);
    deps.broker.end(run.run_id);
    // Followers in other processes get the run's last events before they hear it ended.
    await deps.relaySent?.();
    await deps.completion.announce(run.run_id).catch(() => undefined);
  }

  async function finish(
    run: RunRow,
    control: { workerId: string },
    outcome: { status: "success"; values: unknown } | { status: "error"; error: { error: string; message: string } } | { status: "interrupted" },
    emit: (event: string, data: unknown) => void,
    events: Array<{ id: number; event: string; data: unknown }>,
  ): Promise<void> {
    const error = outcome.status === "error" ? outcome.error : undefined;
    if (error) emit("error", error);
    // The thread's new snapshot is written with the run's end, in one statement; a
    // stateless run's thread is deleted below, so it needs none.
    const snapshot = run.kwargs.temporary
      ? undefined
      : await deps.snapshotOf(run.thread_id, error ? { runError: error } : undefined).catch((e) => {
          deps.log.warn({ err: e, thread_id: run.thread_id }, "thread snapshot failed");
          return undefined;
        });
    const owned = await recordEnd(run, control.workerId, { status: outcome.status, error }, snapshot);
    if (owned === "gone") {
      // The run (or its thread) was deleted while it executed: its waiters still hear of it.
      return tellEnded(run, { run_id: run.run_id, status: "interrupted" });
    }
    if (owned === "taken") {
      // Our lease expired and another worker has this run now: its outcome counts, not ours.
      deps.log.warn({ run_id: run.run_id, attempt: run.attempt }, "run finished after losing its lease; outcome dropped");
      deps.broker.end(run.run_id, { attempt: run.attempt, handedOver: true });
      return;
    }
    if (run.kwargs.stream_resumable && events.length) {
      await persistRunEvents(deps.db, run.run_id, events).catch((e) => deps.log.warn({ err: e }, "persisting run events failed"));
    }
    // A /wait caller gets the thread's values (what the snapshot holds), a stateless one the run's.
    let values: unknown;
    if (outcome.status === "success") values = run.kwargs.temporary ? outcome.values : (snapshot ? snapshot.values : await threadValues(deps.db, run.thread_id));
    if (run.kwargs.temporary) {
      // A waiter in another process (shared PostgreSQL) reads the outcome from here once
      // the run row has gone with its thread; a database of our own has no other process.
      if (deps.db.shared) {
        await saveRunResult(deps.db, { run_id: run.run_id, status: outcome.status, values, error }).catch((e) =>
          deps.log.warn({ err: e, run_id: run.run_id }, "saving a stateless run's result failed"),
        );
      }
      // A stateless run's thread (and its checkpoints) leave with it, before anyone is told it ended.
      await deleteThreadRow(deps.db, run.thread_id).catch(() => undefined);
      await deps.checkpointer.deleteThread(run.thread_id).catch(() => undefined);
    }
    await tellEnded(run, { run_id: run.run_id, status: outcome.status, values, error });
    if (run.kwargs.webhook) {
      const record = { ...toRun({ ...run, status: outcome.status, updated_at: new Date() }), values: values ?? null, error: error ?? null };
      sendWebhook(run.kwargs.webhook, record, deps.webhookPolicy).catch((e) =>
        deps.log.warn({ err: e, run_id: run.run_id }, "webhook delivery failed"),
      );
    }
  }
}


/** Did this run already write a checkpoint (so a retry must continue from it)? */
async function wroteCheckpoint(deps: RunEngineDeps, run: RunRow): Promise<boolean> {
  const latest = await deps.checkpointer.latestCheckpointMeta(run.thread_id);
  return latest?.metadata?.run_id === run.run_id;
}
