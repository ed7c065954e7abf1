import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SlipwayError } from "../../http/errors.ts";
import type { Database } from "../../storage/database.ts";
import type { RunTail, StartingPoint } from "../checkpointer/run-tail.ts";
import type { GraphRegistry } from "../graphs/registry.ts";
import type { RunStreamWriter } from "../stream/run-streams.ts";
import type { SnapshotWrite } from "../threads/repository.ts";
import type { RunLastState } from "../threads/snapshot.ts";
import type { AssistantHandoff } from "./assistant-handoff.ts";
import { AttemptOutput } from "./attempt-output.ts";
import { afterCancel, afterLostProcess } from "./attempt-stopped.ts";
import { endRun } from "./end-run.ts";
import { executeGraph, type RunAssistant } from "./executor.ts";
import type { RunLifecycle } from "./lifecycle.ts";
import type { ClaimedRun } from "./queue-repository.ts";
import type { RunRow } from "./repository.ts";

/** Attempts after which a run that keeps failing to finish ends in error. */
export const MAX_RUN_ATTEMPTS = 5;

/** What the worker pool gives an attempt. */
export interface AttemptControl {
  signal: AbortSignal;
  workerId: string;
  /** Whether this worker may take its thread's next run when this one ends (undefined: no). */
  claimNext?: () => { leaseSeconds: number } | undefined;
  /** Told as soon as the end claimed the next run, before the attempt returns it. */
  claimedNext?: (run: RunRow) => void;
  /** The thread's newest checkpoint, when the run that claimed this one knew it (run-tail.ts). */
  start?: StartingPoint;
}

/**
 * The thread's next run, claimed for the same worker with this one's end (migration
 * 0023), and the checkpoint this one ended on, which is where the next one starts.
 */
export type NextRun = ClaimedRun & { start?: StartingPoint };

/** One attempt as its steps see it: the run, what the pool gave it, and its stream output. */
export interface Attempt {
  run: RunRow;
  control: AttemptControl;
  output: AttemptOutput;
}

export interface AttemptDeps {
  db: Database;
  graphs: GraphRegistry;
  streams: RunStreamWriter;
  lifecycle: RunLifecycle;
  assistants: { get(idOrGraphId: string): Promise<RunAssistant> };
  checkpointer: {
    latestCheckpointMeta(threadId: string): Promise<{ checkpoint_id: string; metadata: Record<string, unknown> } | undefined>;
    deleteCheckpointsOfRun(threadId: string, runId: string): Promise<unknown>;
    deleteThread(threadId: string): Promise<void>;
    /** Follows the run's own saves (checkpointer/run-tail.ts) until unfollow. */
    followRun(threadId: string, runId: string, durability: RunRow["kwargs"]["durability"], start?: StartingPoint): RunTail;
    unfollow(tail: RunTail): void;
    getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  };
  /** Computes the thread's snapshot after a run (undefined: thread gone); `fromRun` saves reading it back. */
  snapshotOf(threadId: string, outcome?: { runError?: unknown }, fromRun?: RunLastState): Promise<SnapshotWrite | undefined>;
  /** Rewrites the thread's snapshot; returns the values written (undefined: thread gone). */
  refreshThread(threadId: string, outcome?: { runError?: unknown }): Promise<{ values: unknown } | undefined>;
  /** Assistants of runs created in this process (saves reading them again). */
  handoff?: AssistantHandoff;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

/**
 * Takes one claimed run from start to its recorded end: stream events, final status,
 * thread snapshot and removal of a stateless run's thread; its lifecycle events tell
 * everyone else (waiters, streams, webhook). Comes back with the thread's next run when
 * the pool let the end claim it (`control.claimNext`, migration 0023).
 *
 * The steps, each in a file of its own: run the graph (here), then either end the run
 * (end-run.ts: record the end, record-end.ts, then announce it, announce-end.ts) or, when
 * it was stopped, do what the stop asked for (attempt-stopped.ts).
 */
export function createAttemptRunner(deps: AttemptDeps) {
  return async function runAttempt(run: RunRow, control: AttemptControl): Promise<NextRun | undefined> {
    await deps.lifecycle.emit("claimed", { run });
    const attempt: Attempt = { run, control, output: new AttemptOutput(deps.streams, run) };
    attempt.output.emit("metadata", { run_id: run.run_id, attempt: run.attempt });

    // A run retried this often (each retry follows a crash or an end that could not be
    // recorded) would loop for ever: it ends in error instead.
    if (run.attempt > MAX_RUN_ATTEMPTS) {
      const message = `the run was started ${run.attempt - 1} times without its end being recorded; giving up`;
      return endRun(deps, attempt, { status: "error", error: { error: "RunAttemptsExceeded", message } });
    }

    let assistant: RunAssistant;
    try {
      assistant = deps.handoff?.take(run.run_id) ?? (await deps.assistants.get(run.assistant_id));
    } catch (error) {
      // Any other failure (the database's) is no outcome of the run: it goes up, the run
      // leaves the pool, and the sweeper gives it another attempt once its lease expires.
      if (!(error instanceof SlipwayError && error.code === "not_found")) throw error;
      return endRun(deps, attempt, { status: "error", error: { error: "AssistantNotFound", message: error.message } });
    }
    return executeAndEnd(deps, attempt, assistant);
  };
}

/** Runs the graph from where the run stands (its own last checkpoint on a retry), then ends the run as the graph did. */
async function executeAndEnd(deps: AttemptDeps, attempt: Attempt, assistant: RunAssistant): Promise<NextRun | undefined> {
  const { run, control } = attempt;
  const resumeFromCheckpoint = run.attempt > 1 && (await wroteCheckpoint(deps, run));
  await deps.lifecycle.emit("started", { run });
  const tail = deps.checkpointer.followRun(run.thread_id, run.run_id, run.kwargs.durability, resumeFromCheckpoint ? undefined : control.start);
  try {
    const outcome = await executeGraph({ graphs: deps.graphs, assistant, run, signal: control.signal, emit: attempt.output.emit, resumeFromCheckpoint });
    if (outcome.status === "cancelled") return await afterCancel(deps, attempt, tail);
    if (outcome.status === "lost") return await afterLostProcess(deps, attempt, tail, outcome.error);
    return await endRun(deps, attempt, outcome.status === "success" ? { status: "success", values: outcome.values } : outcome, {
      tail,
      graph: outcome.graph,
      sent: outcome.status === "success" ? outcome.final : undefined,
    });
  } finally {
    deps.checkpointer.unfollow(tail);
  }
}

/** Did this run already write a checkpoint (so a retry must continue from it)? */
async function wroteCheckpoint(deps: AttemptDeps, run: RunRow): Promise<boolean> {
  const latest = await deps.checkpointer.latestCheckpointMeta(run.thread_id);
  return latest?.metadata?.run_id === run.run_id;
}
