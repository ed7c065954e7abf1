import type { Database, Queryable } from "../../storage/database.ts";
import { graphForThread } from "../assistants/thread-graph.ts";
import type { GraphLike, GraphRegistry, StateSnapshotLike } from "../graphs/registry.ts";
import { readingThrough } from "../graphs/graph-copy.ts";
import { describeError, toWire, valuesToWire, type WireValues } from "../serialize.ts";
import { getThread, lockThread, writeSnapshot, type SnapshotWrite, type ThreadRow } from "./repository.ts";
import type { ThreadStatus } from "./schemas.ts";
import { hasCheckpoint, readSnapshot } from "./state.ts";

/**
 * The thread status machine, in one place. A thread is
 * - `busy` while any of its runs is pending or running (decided in SQL, under the thread lock),
 * - else `error` when the run that just ended raised,
 * - else `interrupted` when its latest checkpoint waits on something: interrupts or next nodes,
 * - else `idle`.
 */
export function settledStatus(input: { runError: boolean; interrupts: number; next: number }): Exclude<ThreadStatus, "busy"> {
  if (input.runError) return "error";
  if (input.interrupts > 0 || input.next > 0) return "interrupted";
  return "idle";
}

/**
 * The graph a thread runs (its `metadata.graph_id`), or undefined when it has none yet.
 * A factory graph is built with the config of the thread's assistant.
 */
export async function graphOfThread(
  deps: { db: Queryable; graphs: GraphRegistry },
  thread: Pick<ThreadRow, "metadata" | "config"> & { thread_id?: string },
): Promise<GraphLike | undefined> {
  const graphId = thread.metadata?.graph_id;
  if (typeof graphId !== "string" || !deps.graphs.has(graphId)) return undefined;
  return graphForThread(deps, graphId, thread);
}

/** `{task_id: [interrupt, ...]}` for the tasks that wait on a human, as the vendor's Thread.interrupts. */
function interruptMap(snapshot: StateSnapshotLike): Record<string, unknown[]> {
  const map: Record<string, unknown[]> = {};
  for (const task of snapshot.tasks ?? []) {
    if (task.interrupts?.length) map[task.id] = toWire(task.interrupts) as unknown[];
  }
  return map;
}

/**
 * What a run that just ended knows of its thread: the graph it ran, and a checkpointer
 * that answers the thread's newest checkpoint from what the run saved (RunTail.lend).
 */
export interface RunLastState {
  graph: GraphLike;
  checkpointer: object;
  /** The run's last values as sent on its stream: unchanged keys are not converted again. */
  sent?: WireValues;
}

/** LangGraph's config key for a checkpointer lent to a graph's state methods (stable across its versions). */
const LENT_CHECKPOINTER = "__pregel_checkpointer";

/**
 * Computes a thread's snapshot (values, interrupts, error, settled status) from its
 * graph's latest state, without writing it; `undefined` when the thread is gone. The
 * run attempt hands it to `finish_run` (repository), which writes it with the run's end.
 * Given what the run saved last (`fromRun`), neither the thread nor its checkpoint is
 * read back: the state comes from the run's own graph and checkpoint.
 */
export async function computeThreadSnapshot(
  deps: { db: Database; graphs: GraphRegistry; now?: () => Date },
  threadId: string,
  outcome: { runError?: unknown } = {},
  fromRun?: RunLastState,
): Promise<SnapshotWrite | undefined> {
  let saved: StateSnapshotLike | undefined;
  let fallbackValues: unknown = null;
  if (fromRun) {
    saved = await readingThrough(fromRun.graph, fromRun.checkpointer).getState({
      configurable: { thread_id: threadId, [LENT_CHECKPOINTER]: fromRun.checkpointer },
    });
  } else {
    const thread = await getThread(deps.db, threadId);
    if (!thread) return undefined;
    const graph = await graphOfThread(deps, thread);
    const snapshot = graph ? await readSnapshot(graph, { thread_id: threadId }) : undefined;
    saved = snapshot && hasCheckpoint(snapshot) ? snapshot : undefined;
    fallbackValues = thread.values ?? null;
  }
  const interrupts = saved ? interruptMap(saved) : {};
  const runError = outcome.runError;
  return {
    values: saved ? (valuesToWire(saved.values, fromRun?.sent) ?? {}) : fallbackValues,
    interrupts,
    error: runError === undefined ? null : errorJson(runError),
    settledStatus: settledStatus({
      runError: runError !== undefined,
      interrupts: Object.keys(interrupts).length,
      next: saved?.next?.length ?? 0,
    }),
    now: deps.now?.() ?? new Date(),
  };
}

/**
 * Recomputes a thread's stored snapshot (values, interrupts, error, status) from its
 * graph's latest state: after a rollback, a cancelled pending run, or POST
 * /threads/{id}/state. A thread that no longer exists is left alone.
 *
 * The graph is read before the thread lock is taken (PGlite runs one statement at a
 * time, so reading checkpoints inside our transaction would wait on itself); the write
 * then happens under the lock run creation also takes, which makes `busy` exact.
 * Returns the values written, or `undefined` when the thread is gone.
 */
export async function refreshThreadSnapshot(
  deps: { db: Database; graphs: GraphRegistry; now?: () => Date },
  threadId: string,
  outcome: { runError?: unknown } = {},
): Promise<{ values: unknown } | undefined> {
  const write = await computeThreadSnapshot(deps, threadId, outcome);
  if (!write) return undefined;
  return deps.db.transaction(async (tx) => {
    if (!(await lockThread(tx, threadId))) return undefined;
    await writeSnapshot(tx, threadId, write);
    return { values: write.values };
  });
}

/** A run error as stored on the thread: JSON as given, or `{error, message}` for a thrown value. */
function errorJson(error: unknown): unknown {
  if (error instanceof Error) return describeError(error);
  return toWire(error);
}
