import type { GraphLike, GraphRegistry } from "../graphs/registry.ts";
import { describeError, toWire, valuesToWire, type WireValues } from "../serialize.ts";
import { MessagesModeTracker } from "../stream/messages-mode.ts";
import { emitChunk, planStream, type Emit } from "../stream/modes.ts";
import type { RunRow } from "./repository.ts";
import { LANGGRAPH_JS_VERSION } from "../../config/version.ts";

/** The assistant fields a run needs. */
export interface RunAssistant {
  assistant_id: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  /** The first layer of a run's metadata (then the thread's, then the run's own). */
  metadata?: Record<string, unknown>;
}

/**
 * How the run ended; `graph` is the graph it ran, when it got that far. `final`: its
 * last values as sent on the stream, for the thread's snapshot to reuse.
 */
export type ExecutionOutcome =
  | { status: "success"; values: unknown; graph: GraphLike; final?: WireValues }
  | { status: "error"; error: { error: string; message: string }; graph?: GraphLike }
  | { status: "cancelled" }
  /** The process that ran the graph died (a Python worker, decision 0036): not the graph's failure. */
  | { status: "lost"; error: { error: string; message: string } };

export interface ExecuteOptions {
  graphs: GraphRegistry;
  assistant: RunAssistant;
  run: RunRow;
  signal: AbortSignal;
  emit: Emit;
  /** Retrying after a crash: continue from the checkpoint this run last wrote. */
  resumeFromCheckpoint: boolean;
}

/**
 * Executes one run of a graph, turning its output into stream events. The outcome
 * says how it ended; a cancellation (abort) is reported as such and the caller
 * decides between `interrupted` and rollback.
 */
export async function executeGraph(options: ExecuteOptions): Promise<ExecutionOutcome> {
  const { run, assistant, emit, signal } = options;
  const kwargs = run.kwargs;
  const config = buildConfig(run, assistant, options.graphs.langgraphVersion(assistant.graph_id) ?? LANGGRAPH_JS_VERSION);
  const plan = planStream(kwargs.stream_mode, kwargs.stream_subgraphs);
  let finalValues: unknown;
  let sent: WireValues | undefined;
  const seeValues = (seen: { values?: unknown; sent?: WireValues }) => {
    if (!("values" in seen)) return;
    finalValues = seen.values;
    sent = seen.sent;
  };
  let graph: GraphLike | undefined;
  try {
    graph = await options.graphs.resolve(assistant.graph_id, config);
    const input = options.resumeFromCheckpoint ? null : await buildInput(kwargs.input, kwargs.command);
    const streamConfig = {
      ...config,
      signal,
      streamMode: plan.libraryModes,
      subgraphs: plan.subgraphs,
      ...(kwargs.interrupt_before ? { interruptBefore: kwargs.interrupt_before } : {}),
      ...(kwargs.interrupt_after ? { interruptAfter: kwargs.interrupt_after } : {}),
      durability: kwargs.durability,
    };
    if (plan.useEvents) {
      await streamWithEvents(graph, input, streamConfig, run.run_id, plan, emit, seeValues);
    } else {
      for await (const chunk of await graph.stream(input, streamConfig)) seeValues(emitChunk(plan, chunk, emit));
    }
    // The last values chunk was sent as they are now: the graph has ended.
    const final = sent && sent.raw === finalValues ? sent : undefined;
    return { status: "success", values: final ? final.wire : valuesToWire(finalValues ?? {}), graph, final };
  } catch (error) {
    if (signal.aborted) return { status: "cancelled" };
    if (executorLost(error)) return { status: "lost", error: describeError(error) };
    return { status: "error", error: describeError(error), graph };
  }
}

/** Errors marked `executorLost`: the graph's process went away mid-run (python/worker.ts). */
function executorLost(error: unknown): boolean {
  return (error as { executorLost?: unknown } | null)?.executorLost === true;
}

async function streamWithEvents(
  graph: GraphLike,
  input: unknown,
  config: Record<string, unknown>,
  runId: string,
  plan: ReturnType<typeof planStream>,
  emit: Emit,
  seeValues: (seen: ReturnType<typeof emitChunk>) => void,
): Promise<void> {
  const messages = plan.apiModes.has("messages") ? new MessagesModeTracker(emit) : undefined;
  const events = graph.streamEvents(input, { ...config, version: "v2", runId }) as AsyncIterable<{
    event: string;
    run_id?: string;
    data?: { chunk?: unknown };
  }>;
  for await (const event of events) {
    if (event.event === "on_chain_stream" && event.run_id === runId) {
      const seen = emitChunk(plan, event.data?.chunk, emit);
      seeValues(seen);
      if ("values" in seen) messages?.values(seen.values);
    } else if (plan.apiModes.has("events")) {
      emit("events", toWire(event));
    }
    messages?.handle(event);
  }
}

/**
 * What the vendor's JS server tags every run's metadata with (tracing and graphs may
 * read it); `langgraph_version` is the project's own @langchain/langgraph.
 */
const PLATFORM_METADATA = { langgraph_plan: "developer", langgraph_host: "self-hosted" };

/** The RunnableConfig: assistant config under the run's, plus the ids LangGraph reads. */
function buildConfig(run: RunRow, assistant: RunAssistant, langgraphVersion: string): Record<string, unknown> {
  const base = assistant.config ?? {};
  const own = run.kwargs.config ?? {};
  const baseConfigurable = (base.configurable as Record<string, unknown>) ?? {};
  const ownConfigurable = (own.configurable as Record<string, unknown>) ?? {};
  const { recursion_limit: ownLimit, configurable: _o, tags: ownTags, ...ownRest } = own as Record<string, unknown>;
  const { recursion_limit: baseLimit, configurable: _b, tags: baseTags, ...baseRest } = base as Record<string, unknown>;
  const ids = {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: assistant.assistant_id,
    graph_id: assistant.graph_id,
  };
  return {
    ...baseRest,
    ...ownRest,
    tags: [...((baseTags as string[]) ?? []), ...((ownTags as string[]) ?? [])],
    recursionLimit: (ownLimit as number) ?? (baseLimit as number) ?? 25,
    configurable: {
      ...baseConfigurable,
      ...ownConfigurable,
      ...ids,
      ...(run.kwargs.checkpoint_id ? { checkpoint_id: run.kwargs.checkpoint_id } : {}),
      ...(run.kwargs.checkpoint_ns ? { checkpoint_ns: run.kwargs.checkpoint_ns } : {}),
    },
    // Checkpoint metadata inherits these: rollback and crash recovery find a run's checkpoints by run_id.
    metadata: {
      ...run.metadata,
      ...ids,
      run_attempt: run.attempt,
      ...PLATFORM_METADATA,
      langgraph_version: langgraphVersion,
      langgraph_api_url: process.env.LANGGRAPH_API_URL,
    },
    context: { ...(assistant.context ?? {}), ...(run.kwargs.context ?? {}) },
  };
}

async function buildInput(input: unknown, command: Record<string, unknown> | null): Promise<unknown> {
  if (!command) return input ?? null;
  // Loaded for the first run with a command: a process that runs none never loads it (decision 0053).
  const { Command, Send } = await import("@langchain/langgraph");
  const goto = command.goto;
  const toSend = (g: unknown) =>
    g && typeof g === "object" && "node" in (g as object) ? new Send((g as { node: string }).node, (g as { input: unknown }).input) : g;
  return new Command({
    ...(command.update !== undefined && command.update !== null ? { update: command.update as Record<string, unknown> } : {}),
    ...("resume" in command ? { resume: command.resume } : {}),
    ...(goto !== undefined && goto !== null ? { goto: (Array.isArray(goto) ? goto.map(toSend) : toSend(goto)) as string } : {}),
  });
}
