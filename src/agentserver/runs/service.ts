import type { Database, Queryable } from "../../storage/database.ts";
import { SlipwayError, conflict, invalidField, notFound } from "../../http/errors.ts";
import { insertBusyThread, lockThread, markThreadBusy, threadExists, threadValues } from "../threads/repository.ts";
import { runCancelChannel, runsChannel } from "./announcements.ts";
import type { RunCompletion, RunResult } from "./completion.ts";
import type { RunAssistant } from "./executor.ts";
import type { RunLifecycle } from "./lifecycle.ts";
import {
  activeRunsOfThread,
  deletePendingRun,
  deleteRun,
  findRunsToCancel,
  getRun,
  insertRun,
  interruptPendingRun,
  listRuns,
  readRunResult,
  requestCancel,
  type RunKwargs,
  type RunRow,
} from "./repository.ts";
import { enqueueRunFast, isStaleAssistant } from "./queue-repository.ts";
import type { RunCreate, RunStatus } from "./schemas.ts";
import { isTerminal } from "../run-statuses.ts";
import type { AssistantHandoff } from "./assistant-handoff.ts";
import type { AssistantStamp } from "../assistants/service.ts";
import { checkWebhookUrl, type WebhookPolicy } from "./webhook.ts";
import { durabilityOf, streamModesOf } from "./run-defaults.ts";
import type { WorkerPool } from "./worker-pool.ts";

export interface RunServiceDeps {
  db: Database;
  lifecycle: RunLifecycle;
  completion: RunCompletion;
  /** The run's assistant; with a stamp when queueing must check it is still current (assistants/service.ts forRun). */
  assistants: { forRun(idOrGraphId: string, fresh?: boolean): Promise<{ assistant: RunAssistant; stamp?: AssistantStamp }> };
  refreshThread(threadId: string, outcome?: { runError?: unknown }): Promise<unknown>;
  /** Aborts a run executing in this process (cross-process: the cancel NOTIFY). */
  abortLocal(runId: string): void;
  webhookPolicy: WebhookPolicy;
  newId: () => string;
  /** Hands the assistant read here to this process's worker (see assistant-handoff.ts). */
  handoff?: AssistantHandoff;
  /** This process's workers, when a new run may be claimed by the statement that queues it. */
  claimer?: Pick<WorkerPool, "reserve" | "unreserve" | "hold" | "adopt">;
}

/** A run to create, as create() has it before the queueing statements. */
interface RunRequest {
  /** null: a stateless run, on a new temporary thread (`newThreadId`). */
  threadId: string | null;
  body: RunCreate;
  newThreadId: string;
  fields: Pick<RunRow, "run_id" | "metadata" | "kwargs" | "multitask_strategy"> & { afterSeconds: number };
}

/** A run stopped by a new run's interrupt / rollback strategy, told once the new run is committed. */
type StoppedRun = { run: RunRow; wasPending: boolean };

/**
 * What a run takes from its assistant: its thread's and its own metadata layers (the
 * run's metadata is the assistant's, then the thread's, then its own, as on the vendor's
 * servers). A thread the run creates (stateless, or if_not_exists) carries the run's
 * metadata too, as on the vendor's server: custom auth's owner, set by the create_run
 * handler, among it.
 */
function metadataLayers(request: RunRequest, assistant: RunAssistant) {
  const threadMeta = { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id };
  return { threadMeta, newThreadMeta: { ...threadMeta, ...(request.body.metadata ?? {}) }, assistantMetadata: assistant.metadata ?? {} };
}

/** Rules of runs: creation with multitask strategies, cancellation, waiting. */
export class RunService {
  constructor(private readonly deps: RunServiceDeps) {}

  /**
   * Creates a run on `threadId`, or on a new temporary thread when it is null
   * (stateless). Applies the multitask strategy against the thread's active runs in
   * the same transaction that inserts the run, so two concurrent creations cannot
   * both see an idle thread.
   *
   * The steps: queue it in one statement when no strategy has to decide (queueFast),
   * else in a transaction that decides (queueDeciding); then announce it (announceCreated).
   */
  async create(
    threadId: string | null,
    body: RunCreate,
    defaults: { onDisconnect: "cancel" | "continue" },
    beforeAnnounce?: (run: RunRow) => void,
  ): Promise<RunRow> {
    const { deps } = this;
    const kwargs = this.kwargsOf(body, threadId === null, defaults);
    const read = await deps.assistants.forRun(body.assistant_id);
    const fields = {
      run_id: deps.newId(),
      metadata: body.metadata ?? {},
      kwargs,
      multitask_strategy: body.multitask_strategy ?? "enqueue",
      afterSeconds: body.after_seconds ?? 0,
    };
    const request: RunRequest = { threadId, body, fields, newThreadId: deps.newId() };
    const fast = await this.queueFast(request, read);
    if (fast.queued) {
      const { run, startsEmpty } = fast.queued;
      return this.announceCreated(run, {
        assistant: fast.assistant,
        stopped: [],
        delaySeconds: request.fields.afterSeconds,
        startsEmpty,
        announced: this.announceOn() !== undefined,
        beforeAnnounce,
      });
    }
    // The transaction does not check a kept assistant: it reads it afresh.
    const assistant = fast.stamp ? (await deps.assistants.forRun(body.assistant_id, true)).assistant : fast.assistant;
    const stopped: StoppedRun[] = [];
    const run = await this.queueDeciding(request, assistant, stopped);
    return this.announceCreated(run, { assistant, stopped, delaySeconds: request.fields.afterSeconds, startsEmpty: false, announced: false, beforeAnnounce });
  }

  /** Where a run queued in one statement is announced to other processes: a PostgreSQL server's channel (migration 0022). */
  private announceOn(): string | undefined {
    return this.deps.db.kind === "postgres" ? runsChannel(this.deps.db.schema) : undefined;
  }

  /**
   * One statement for the common case (enqueue_run): no strategy has to decide. Nothing
   * queued (undefined) sends the caller to queueDeciding. A free worker of ours may take
   * the run in the same statement (migration 0022). When the assistant this process kept
   * changed or went since it was read, it is read again (not found: 404) and the run is
   * queued with that, unchecked, as queueDeciding does: a write committed after this read
   * is concurrent with the run, and checking again would answer 500 when another process
   * writes it meanwhile.
   */
  private async queueFast(
    request: RunRequest,
    read: { assistant: RunAssistant; stamp?: AssistantStamp },
  ): Promise<{ queued?: { run: RunRow; startsEmpty: boolean }; assistant: RunAssistant; stamp?: AssistantStamp }> {
    try {
      return { ...read, queued: await this.queueInOneStatement(request, read.assistant, read.stamp) };
    } catch (error) {
      if (!isStaleAssistant(error)) throw error;
      const { assistant } = await this.deps.assistants.forRun(request.body.assistant_id, true);
      return { assistant, queued: await this.queueInOneStatement(request, assistant, undefined) };
    }
  }

  private async queueInOneStatement(request: RunRequest, assistant: RunAssistant, stamp: AssistantStamp | undefined) {
    const { deps } = this;
    const { threadId, fields } = request;
    const layers = metadataLayers(request, assistant);
    const claimFor = fields.afterSeconds > 0 ? undefined : deps.claimer?.reserve();
    let enqueued: Awaited<ReturnType<typeof enqueueRunFast>>;
    try {
      enqueued = await enqueueRunFast(deps.db, {
        ...fields,
        assistant_id: assistant.assistant_id,
        thread_id: threadId ?? request.newThreadId,
        newThread: threadId === null,
        threadMetadata: threadId === null ? layers.newThreadMeta : layers.threadMeta,
        assistantMetadata: layers.assistantMetadata,
        claimFor,
        announceOn: this.announceOn(),
        assistantStamp: stamp,
      });
    } finally {
      if (claimFor && enqueued?.run.status === "running") deps.claimer?.hold(enqueued.run, true);
      else if (claimFor) deps.claimer?.unreserve();
    }
    return enqueued;
  }

  /**
   * The general path, in one transaction: the thread is locked (or created, for a
   * stateless run or if_not_exists "create"), the strategy decides against its active
   * runs (reject: 409; interrupt / rollback: they are stopped, see stopActive), and the
   * run is inserted. The runs stopped are listed in `stopped`, to be told once committed.
   */
  private queueDeciding(request: RunRequest, assistant: RunAssistant, stopped: StoppedRun[]): Promise<RunRow> {
    const { threadId, body, fields } = request;
    const { threadMeta, newThreadMeta, assistantMetadata } = metadataLayers(request, assistant);
    const strategy = fields.multitask_strategy;
    return this.deps.db.transaction(async (tx) => {
      const id = threadId ?? request.newThreadId;
      const thread = threadId ? await lockThread(tx, id) : undefined;
      let threadMetadata = newThreadMeta;
      if (!thread) {
        if (threadId && body.if_not_exists !== "create") throw notFound(`Thread ${threadId} not found`);
        await insertBusyThread(tx, id, newThreadMeta, fields.kwargs.temporary);
      } else {
        threadMetadata = { ...thread.metadata, ...threadMeta };
        const active = await activeRunsOfThread(tx, id);
        if (active.length && strategy === "reject") {
          throw conflict(`Thread ${id} is busy with run ${active[0].run_id}; multitask_strategy "reject" refuses new runs`);
        }
        if (active.length && (strategy === "interrupt" || strategy === "rollback")) {
          await this.stopActive(tx, active, strategy, stopped);
        }
        await markThreadBusy(tx, id, threadMeta);
      }
      return insertRun(tx, {
        ...fields,
        assistant_id: assistant.assistant_id,
        metadata: { ...assistantMetadata, ...threadMetadata, ...fields.metadata },
        thread_id: id,
      });
    });
  }

  /**
   * After the run is committed: its assistant handed to our worker, the runs it stopped
   * told (pending ones have ended, they never start; running ones are told to stop), and
   * the run announced to workers and streams.
   */
  private async announceCreated(
    run: RunRow,
    created: {
      assistant: RunAssistant;
      stopped: StoppedRun[];
      delaySeconds: number;
      /** Claimed on a thread with no checkpoint (enqueueRunFast). */
      startsEmpty: boolean;
      /** Announced to other processes by the statement that queued it. */
      announced: boolean;
      beforeAnnounce?: (run: RunRow) => void;
    },
  ): Promise<RunRow> {
    const { deps } = this;
    deps.handoff?.put(run.run_id, created.assistant);
    try {
      created.beforeAnnounce?.(run);
      for (const { run: stopped, wasPending } of created.stopped) {
        if (wasPending) await deps.lifecycle.emit("ended", { run: stopped, result: { run_id: stopped.run_id, status: "interrupted" }, cause: "stopped" });
        else await this.signalCancel(stopped.run_id);
      }
      await deps.lifecycle.emit("queued", { run, delaySeconds: created.delaySeconds, announced: created.announced });
    } finally {
      // Claimed as it was queued: ours to execute whatever happened above (its lease says so).
      if (run.status === "running") deps.claimer?.adopt(run, created.startsEmpty ? {} : undefined);
    }
    return run;
  }

  /**
   * interrupt / rollback strategies: pending runs stop now (their waiters, here and in
   * other processes, are told once the transaction commits), running ones are told to.
   */
  private async stopActive(tx: Queryable, active: RunRow[], action: "interrupt" | "rollback", stopped: StoppedRun[]): Promise<void> {
    for (const run of active) {
      // Claims take no thread lock: a run read as pending may have started since. Then
      // it is stopped as a running run is, by its worker.
      if (run.status === "pending" && (await this.stopPending(tx, run.run_id, action))) {
        stopped.push({ run, wasPending: true });
      } else if (await requestCancel(tx, run.run_id, action)) {
        stopped.push({ run, wasPending: false });
      }
    }
  }

  /** Stops a run that has not started; false when a worker claimed it meanwhile. */
  private stopPending(db: Queryable, runId: string, action: "interrupt" | "rollback"): Promise<boolean> {
    return action === "rollback" ? deletePendingRun(db, runId) : interruptPendingRun(db, runId);
  }

  private async signalCancel(runId: string): Promise<void> {
    this.deps.abortLocal(runId);
    await this.deps.db.notify(runCancelChannel(this.deps.db.schema), runId);
  }

  async get(threadId: string | undefined, runId: string): Promise<RunRow> {
    const run = await getRun(this.deps.db, runId, threadId);
    if (!run) throw notFound(`Run ${runId} not found`);
    return run;
  }

  async list(threadId: string, options: { limit: number; offset: number; status?: RunStatus }): Promise<RunRow[]> {
    if (!(await threadExists(this.deps.db, threadId))) throw notFound(`Thread ${threadId} not found`);
    return listRuns(this.deps.db, threadId, options);
  }

  async delete(threadId: string, runId: string): Promise<void> {
    const run = await this.get(threadId, runId);
    if (!isTerminal(run.status)) {
      throw conflict(`Run ${runId} is ${run.status}; cancel it before deleting it`);
    }
    await deleteRun(this.deps.db, runId);
  }

  /** Cancels one run. Pending runs end at once; running ones are aborted by their worker. */
  async cancel(threadId: string | undefined, runId: string, options: { wait: boolean; action: "interrupt" | "rollback" }): Promise<void> {
    const run = await this.get(threadId, runId);
    if (isTerminal(run.status)) throw conflict(`Run ${runId} already ended with status ${run.status}`);
    await this.cancelRow(run, options.action);
    if (options.wait) await this.waitForEnd(run.run_id);
  }

  async cancelMany(filter: { runIds?: string[]; threadId?: string; status?: "pending" | "running" | "all" }, action: "interrupt" | "rollback"): Promise<void> {
    if (!filter.runIds?.length && !filter.threadId) {
      throw invalidField(["body"], "give run_ids, or thread_id (with an optional status)");
    }
    const runs = await findRunsToCancel(this.deps.db, { ...filter, status: filter.status ?? "all" });
    if (filter.runIds?.length) {
      const found = new Set(runs.map((r) => r.run_id));
      const missing = filter.runIds.filter((id) => !found.has(id));
      if (missing.length) throw notFound(`Runs not found or not cancellable: ${missing.join(", ")}`);
    }
    for (const run of runs) await this.cancelRow(run, action);
  }

  private async cancelRow(run: RunRow, action: "interrupt" | "rollback"): Promise<void> {
    const { db } = this.deps;
    if (run.status === "pending") {
      if (await this.stopPending(db, run.run_id, action)) {
        // Its end also tells the workers that its thread's queue moved (lifecycle-listeners.ts).
        await this.deps.lifecycle.emit("ended", { run, result: { run_id: run.run_id, status: "interrupted" }, cause: "stopped" });
        await this.deps.refreshThread(run.thread_id);
        return;
      }
    }
    const marked = await requestCancel(db, run.run_id, action);
    if (marked) await this.signalCancel(run.run_id);
  }

  /**
   * Creates a run and waits for its end. The waiter is registered before the run is
   * announced to workers, so it cannot miss the end and needs no first look at the row.
   */
  async createAndWait(
    threadId: string | null,
    body: RunCreate,
    defaults: { onDisconnect: "cancel" | "continue" },
    signal: AbortSignal,
  ): Promise<{ run: RunRow; ended: Promise<RunResult> }> {
    let waiting!: Promise<RunResult | undefined>;
    const run = await this.create(threadId, body, defaults, (created) => {
      waiting = this.deps.completion.wait(created.run_id, signal);
    });
    return { run, ended: waiting.then((local) => local ?? this.resultFromRecords(run.run_id)) };
  }

  /** Blocks until the run has ended; returns its result (values or error). */
  async waitForEnd(runId: string, signal?: AbortSignal): Promise<RunResult> {
    const waiting = this.deps.completion.wait(runId, signal);
    const current = await getRun(this.deps.db, runId);
    if (!current) {
      this.deps.completion.settle(runId, undefined);
      return (await waiting) ?? { run_id: runId, status: "interrupted" };
    }
    if (isTerminal(current.status)) this.deps.completion.settle(runId, undefined);
    return (await waiting) ?? this.resultFromRecords(runId);
  }

  /** A run's result as stored: for a run that ended in another process (or a waiter that gave up). */
  private async resultFromRecords(runId: string): Promise<RunResult> {
    const run = await getRun(this.deps.db, runId);
    if (!run) {
      // A stateless run's row leaves with its thread; its outcome may be kept for us.
      const stored = await readRunResult(this.deps.db, runId);
      if (!stored) return { run_id: runId, status: "interrupted" };
      return { run_id: runId, status: stored.status, values: stored.values, error: (stored.error as RunResult["error"]) ?? undefined };
    }
    return {
      run_id: runId,
      status: run.status,
      values: await threadValues(this.deps.db, run.thread_id),
      error: run.error ? (run.error as RunResult["error"]) : undefined,
    };
  }

  /** The kwargs stored with the run; refuses what cannot be honoured. */
  private kwargsOf(body: RunCreate, stateless: boolean, defaults: { onDisconnect: "cancel" | "continue" }): RunKwargs {
    if (body.feedback_keys?.length) throw invalidField(["body", "feedback_keys"], "feedback URLs need LangSmith, which this server does not use");
    if (body.langsmith_tracer != null) throw invalidField(["body", "langsmith_tracer"], "LangSmith tracing is not supported by this server");
    if (body.input != null && body.command != null) throw invalidField(["body", "command"], "give either input or command, not both");
    if (body.checkpoint_id != null && body.checkpoint?.checkpoint_id != null && body.checkpoint_id !== body.checkpoint.checkpoint_id) {
      throw invalidField(["body", "checkpoint_id"], "disagrees with checkpoint.checkpoint_id");
    }
    if (body.webhook) checkWebhookUrl(body.webhook, this.deps.webhookPolicy);
    return {
      input: body.input ?? null,
      command: (body.command as Record<string, unknown> | null) ?? null,
      config: (body.config as Record<string, unknown>) ?? {},
      context: body.context ?? {},
      stream_mode: streamModesOf(body.stream_mode),
      stream_subgraphs: body.stream_subgraphs ?? false,
      stream_resumable: body.stream_resumable ?? false,
      interrupt_before: body.interrupt_before ?? null,
      interrupt_after: body.interrupt_after ?? null,
      checkpoint_id: body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? null,
      checkpoint_ns: body.checkpoint?.checkpoint_ns ?? "",
      durability: durabilityOf(body),
      webhook: body.webhook ?? null,
      on_disconnect: body.on_disconnect ?? defaults.onDisconnect,
      temporary: stateless && (body.on_completion ?? "delete") === "delete",
      feedback_keys: null,
    };
  }
}

export { SlipwayError };
