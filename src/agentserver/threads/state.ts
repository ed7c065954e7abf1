import { invalidField } from "../../http/errors.ts";
import type { GraphLike, StateSnapshotLike } from "../graphs/registry.ts";
import { describeError, toWire } from "../serialize.ts";
import type { SuperstepInput, ThreadStateWire, WireCheckpointConfig } from "./schemas.ts";

/**
 * Thread state through the thread's graph: LangGraph's StateSnapshot in, the vendor's
 * ThreadState out. Graphs may come from another copy of @langchain/langgraph, so
 * snapshots are read by shape only.
 */

/** Which checkpoint to read or write: the latest of the root graph unless narrowed. */
export interface CheckpointTarget {
  thread_id: string;
  checkpoint_ns?: string | null;
  checkpoint_id?: string | null;
  checkpoint_map?: Record<string, unknown> | null;
}

type Configurable = Record<string, unknown> | undefined;

/** The RunnableConfig LangGraph expects for `target`; empty fields are left out. */
export function configFor(target: CheckpointTarget): { configurable: Record<string, unknown> } {
  const configurable: Record<string, unknown> = { thread_id: target.thread_id, checkpoint_ns: target.checkpoint_ns ?? "" };
  if (target.checkpoint_id) configurable.checkpoint_id = target.checkpoint_id;
  if (target.checkpoint_map) configurable.checkpoint_map = target.checkpoint_map;
  return { configurable };
}

export function wireCheckpoint(configurable: Configurable, fallbackThreadId: string | null = null): WireCheckpointConfig {
  const c = configurable ?? {};
  return {
    thread_id: typeof c.thread_id === "string" ? c.thread_id : fallbackThreadId,
    checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
    checkpoint_id: typeof c.checkpoint_id === "string" ? c.checkpoint_id : null,
    checkpoint_map: c.checkpoint_map && typeof c.checkpoint_map === "object" ? (toWire(c.checkpoint_map) as Record<string, unknown>) : null,
  };
}

/**
 * A subgraph task's checkpoint: the subgraph's thread and namespace, and its
 * checkpoint id and map only when LangGraph knows them. A subgraph that has not run
 * yet has neither, and the vendor leaves them out rather than sending nulls, which a
 * client would pass back as "checkpoint_id: null" when it reads the subgraph's state.
 */
function taskCheckpoint(configurable: Record<string, unknown>, fallbackThreadId: string | null): Partial<WireCheckpointConfig> {
  const full = wireCheckpoint(configurable, fallbackThreadId);
  const checkpoint: Partial<WireCheckpointConfig> = { thread_id: full.thread_id, checkpoint_ns: full.checkpoint_ns };
  if (full.checkpoint_id !== null) checkpoint.checkpoint_id = full.checkpoint_id;
  if (full.checkpoint_map !== null) checkpoint.checkpoint_map = full.checkpoint_map;
  return checkpoint;
}

/** What a thread without a graph or without checkpoints answers, like the vendor's. */
export function emptyState(threadId: string): ThreadStateWire {
  return {
    values: {},
    next: [],
    tasks: [],
    checkpoint: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null },
    metadata: null,
    created_at: null,
    parent_checkpoint: null,
    interrupts: [],
  };
}

function isSnapshot(value: unknown): value is StateSnapshotLike {
  return !!value && typeof value === "object" && "values" in value && "next" in value;
}

/** A snapshot read from a checkpoint (LangGraph answers an empty one for a missing checkpoint). */
export function hasCheckpoint(snapshot: StateSnapshotLike): boolean {
  return snapshot.createdAt !== undefined || !!snapshot.metadata;
}

/** Every interrupt of the snapshot's tasks, in task order. */
function interruptsOf(snapshot: StateSnapshotLike): unknown[] {
  return snapshot.tasks.flatMap((task) => (toWire(task.interrupts ?? []) as unknown[]) ?? []);
}

/** StateSnapshot → ThreadState (values and messages as wire JSON). */
export function toThreadState(snapshot: StateSnapshotLike): ThreadStateWire {
  const configurable = snapshot.config?.configurable;
  const threadId = typeof configurable?.thread_id === "string" ? configurable.thread_id : null;
  if (!hasCheckpoint(snapshot) && threadId) return emptyState(threadId);
  return {
    values: toWire(snapshot.values) ?? {},
    next: [...(snapshot.next ?? [])],
    tasks: snapshot.tasks.map((task) => {
      const nested = task.state as { configurable?: Configurable } | StateSnapshotLike | undefined;
      return {
        id: task.id,
        name: task.name,
        // Where the task sits in the graph, e.g. ["__pregel_pull", "agent"].
        ...(Array.isArray(task.path) ? { path: toWire(task.path) } : {}),
        error: task.error == null ? null : describeError(task.error).message,
        interrupts: toWire(task.interrupts ?? []) ?? [],
        checkpoint: nested && !isSnapshot(nested) && nested.configurable ? taskCheckpoint(nested.configurable, threadId) : null,
        state: isSnapshot(nested) ? toThreadState(nested) : null,
        result: toWire(task.result) ?? null,
      };
    }),
    checkpoint: wireCheckpoint(configurable, threadId),
    metadata: (toWire(snapshot.metadata ?? null) as Record<string, unknown> | null) ?? null,
    created_at: snapshot.createdAt ?? null,
    parent_checkpoint: snapshot.parentConfig?.configurable ? wireCheckpoint(snapshot.parentConfig.configurable, threadId) : null,
    interrupts: interruptsOf(snapshot),
  };
}

/**
 * Keeps the `select`ed fields; `values.<key>` keeps one key of the values (several may
 * be given), as the SDK's getState/getHistory `select` option asks.
 */
export function projectState(state: ThreadStateWire, select?: readonly string[] | null): Partial<ThreadStateWire> {
  if (!select?.length) return state;
  const out: Record<string, unknown> = {};
  const valueKeys: string[] = [];
  for (const field of select) {
    if (field.startsWith("values.")) valueKeys.push(field.slice("values.".length));
    else out[field] = state[field as keyof ThreadStateWire];
  }
  if (valueKeys.length && !("values" in out)) {
    const values = (state.values ?? {}) as Record<string, unknown>;
    out.values = Object.fromEntries(valueKeys.filter((k) => k in values).map((k) => [k, values[k]]));
  }
  return out as Partial<ThreadStateWire>;
}

export async function readSnapshot(graph: GraphLike, target: CheckpointTarget, subgraphs = false): Promise<StateSnapshotLike> {
  return graph.getState(configFor(target), { subgraphs });
}

interface HistoryOptions {
  limit: number;
  before?: string | null;
  filter?: Record<string, unknown> | null;
}

/** States newest first, as ThreadStates. */
export async function readHistory(graph: GraphLike, target: CheckpointTarget, options: HistoryOptions): Promise<ThreadStateWire[]> {
  const states: ThreadStateWire[] = [];
  const listOptions: Record<string, unknown> = { limit: options.limit };
  if (options.before) listOptions.before = { configurable: { checkpoint_id: options.before } };
  if (options.filter && Object.keys(options.filter).length) listOptions.filter = options.filter;
  for await (const snapshot of graph.getStateHistory(configFor(target), listOptions)) {
    states.push(toThreadState(snapshot));
    if (states.length >= options.limit) break;
  }
  return states;
}

/**
 * LangGraph refuses updates it cannot attribute (unknown node, ambiguous as_node, ...)
 * with InvalidUpdateError: that is the client's mistake, a 422 naming the field.
 */
function asInvalidUpdate(error: unknown, loc: (string | number)[], valuesLoc: (string | number)[] = loc): never {
  const e = error as { name?: string; message?: string } | undefined;
  if (e?.name === "InvalidUpdateError" || e?.name === "EmptyChannelError") throw invalidField(loc, String(e.message));
  if (refusedByReducer(error)) throw invalidField(valuesLoc, String(e?.message));
  throw error;
}

/** LangChain's codes for values it cannot take (messages it cannot coerce, a non-object update). */
const VALUE_ERROR_CODES = new Set(["MESSAGE_COERCION_FAILURE", "INVALID_GRAPH_NODE_RETURN_VALUE"]);

/**
 * An update runs no node: besides storage, it applies the graph's reducers to the
 * client's values, and those throw on values they cannot take (the messages reducer
 * with a code, or a TypeError for a null message). Plain errors are left alone: a
 * lost database connection throws one too.
 */
function refusedByReducer(error: unknown): boolean {
  if (error instanceof TypeError || error instanceof RangeError) return true;
  const code = (error as { lc_error_code?: unknown } | null)?.lc_error_code;
  return typeof code === "string" && VALUE_ERROR_CODES.has(code);
}

/** `graph.updateState`; returns the new checkpoint's config. */
export async function updateGraphState(
  graph: GraphLike,
  target: CheckpointTarget,
  values: unknown,
  asNode: string | undefined,
): Promise<{ configurable?: Record<string, unknown> }> {
  try {
    return (await graph.updateState(configFor(target), values, asNode)) as { configurable?: Record<string, unknown> };
  } catch (error) {
    if (target.checkpoint_ns && isMissingSubgraph(error)) {
      throw invalidField(["body", "checkpoint", "checkpoint_ns"], "names no subgraph of the thread's graph");
    }
    return asInvalidUpdate(error, asNode ? ["body", "as_node"] : ["body", "values"], ["body", "values"]);
  }
}

/**
 * LangGraph answers an update at a checkpoint namespace that matches none of its
 * subgraphs with a plain Error `Subgraph "<ns>" not found`: the message is all there is
 * to tell it apart.
 */
function isMissingSubgraph(error: unknown): boolean {
  return error instanceof Error && /^Subgraph ".*" not found$/s.test(error.message);
}

/**
 * ThreadCreate `supersteps`: each superstep becomes one checkpoint holding all its
 * updates (graph.bulkUpdateState). A `command` update becomes a LangGraph Command
 * (update and goto; resume has no meaning outside a run). Graphs without
 * bulkUpdateState get one updateState per update.
 */
export async function applySupersteps(graph: GraphLike, threadId: string, supersteps: SuperstepInput[]): Promise<void> {
  // Loaded when first needed, as in runs/executor.ts (decision 0053).
  const withCommand = supersteps.some((step) => step.updates.some((update) => update.command != null));
  const Command = withCommand ? (await import("@langchain/langgraph")).Command : undefined;
  const steps = supersteps.map((step, i) => ({
    updates: step.updates.map((update, j) => {
      const loc = ["body", "supersteps", i, "updates", j];
      if (update.command != null && update.values != null) throw invalidField([...loc, "command"], "give either values or command, not both");
      if (update.command != null && update.command.resume !== undefined)
        throw invalidField([...loc, "command", "resume"], "resume needs a run; use update or goto");
      const values =
        Command && update.command != null
          ? new Command({ update: (update.command.update ?? undefined) as Record<string, unknown> | undefined, goto: update.command.goto ?? undefined })
          : update.values;
      return { values, asNode: update.as_node };
    }),
  }));
  const config = configFor({ thread_id: threadId });
  try {
    if (typeof graph.bulkUpdateState === "function") {
      await graph.bulkUpdateState(config, steps);
      return;
    }
    for (const step of steps) for (const update of step.updates) await graph.updateState(config, update.values, update.asNode);
  } catch (error) {
    asInvalidUpdate(error, ["body", "supersteps"]);
  }
}
