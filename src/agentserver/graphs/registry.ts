import type { GraphSpec } from "./graph-spec.ts";
import { ownCopy } from "./graph-copy.ts";
import { importGraphExport } from "./import-graph.ts";
import { langgraphVersionFor } from "./langgraph-version.ts";
import { preferProjectCopy } from "../checkpointer/checkpoint-package.ts";
import type { LanggraphConfig } from "./langgraph-config.ts";
import { startPythonGraphs } from "../python/load.ts";
import { GraphLoadError } from "./load-error.ts";
import type { HandlerCache } from "../custom-auth/handlers.ts";
import type { FetchHandler } from "../http-app/load-app.ts";

/**
 * A compiled graph as we use it. Graphs may come from another copy of
 * @langchain/langgraph than ours (the user's node_modules), so everything here is
 * duck-typed: we call methods, never `instanceof`.
 */
export interface GraphLike {
  invoke(input: unknown, config?: unknown): Promise<unknown>;
  stream(input: unknown, config?: unknown): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, config: unknown): AsyncIterable<unknown>;
  getState(config: unknown, options?: unknown): Promise<StateSnapshotLike>;
  getStateHistory(config: unknown, options?: unknown): AsyncIterable<StateSnapshotLike>;
  updateState(config: unknown, values: unknown, asNode?: string): Promise<unknown>;
  bulkUpdateState?(config: unknown, supersteps: unknown): Promise<unknown>;
  getGraphAsync?(config?: unknown): Promise<{ toJSON(): unknown }>;
  getGraph?(config?: unknown): { toJSON(): unknown };
  getSubgraphsAsync?(namespace?: string, recurse?: boolean): AsyncIterable<[string, GraphLike]>;
  withConfig?(config: Record<string, unknown>): unknown;
  checkpointer?: unknown;
  store?: unknown;
  builder?: unknown;
  name?: string;
  nodes?: Record<string, unknown>;
  streamChannels?: unknown;
  interruptBefore?: unknown;
  interruptAfter?: unknown;
}

export interface StateSnapshotLike {
  values: unknown;
  next: string[];
  config: { configurable?: Record<string, unknown> };
  metadata?: Record<string, unknown>;
  createdAt?: string;
  parentConfig?: { configurable?: Record<string, unknown> };
  tasks: Array<{ id: string; name: string; error?: unknown; interrupts?: unknown[]; state?: unknown; path?: unknown; result?: unknown }>;
}

/**
 * What a graph module exports: a compiled graph, an uncompiled builder, a factory of
 * either, or a promise of one of these (settled by the loader before it gets here).
 */
type GraphExport = unknown;

interface GraphDefinition {
  graphId: string;
  description?: string;
  /** The export as loaded; a factory is called per use. */
  source: GraphExport;
  /** The @langchain/langgraph the module imports, when it has its own. */
  langgraphVersion?: string;
}

/** Attaches our checkpointer and store to every graph it hands out. */
interface GraphAttachments {
  checkpointer: unknown;
  store: unknown;
}

export class GraphRegistry {
  private readonly definitions = new Map<string, GraphDefinition>();
  /** Compiled graphs from non-factory exports, built once. */
  private readonly compiled = new Map<string, GraphLike>();

  /** `auth.path` when it is a Python module: run by the worker that runs the Python graphs. */
  pythonAuth?: HandlerCache;

  /** `http.app` when it is a Python ASGI app: served by the same worker. */
  pythonApp?: FetchHandler;

  /** What must stop with the server: the Python worker, when the project has Python graphs. */
  private readonly closers: (() => Promise<void>)[] = [];

  constructor(private readonly attachments: GraphAttachments) {}

  onClose(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.splice(0).map((close) => close()));
  }

  ids(): string[] {
    return [...this.definitions.keys()];
  }

  has(graphId: string): boolean {
    return this.definitions.has(graphId);
  }

  description(graphId: string): string | undefined {
    return this.definitions.get(graphId)?.description;
  }

  /** Whether the graph is built per use from a config (its export is a function of one). */
  isFactory(graphId: string): boolean {
    const definition = this.definitions.get(graphId);
    return !!definition && isFactoryExport(definition.source);
  }

  /** The project's @langchain/langgraph version for this graph; undefined for a graph on Slipway's copy. */
  langgraphVersion(graphId: string): string | undefined {
    return this.definitions.get(graphId)?.langgraphVersion;
  }

  /** Registers a graph export directly (tests, or graphs built in code). */
  register(graphId: string, source: GraphExport, description?: string, langgraphVersion?: string): void {
    this.definitions.set(graphId, { graphId, source, description, langgraphVersion });
    this.compiled.delete(graphId);
  }

  /**
   * The runnable graph for `graphId`. A factory export receives the run's config
   * (as the vendor server does), so it can build a graph per assistant config.
   */
  async resolve(graphId: string, config: Record<string, unknown> = {}): Promise<GraphLike> {
    const definition = this.definitions.get(graphId);
    if (!definition) throw new GraphLoadError(`graph not found: ${graphId}`);
    const cached = this.compiled.get(graphId);
    if (cached) return cached;
    const isFactory = isFactoryExport(definition.source);
    const produced = isFactory ? await (definition.source as (c: unknown) => unknown)(config) : definition.source;
    const graph = this.attach(toCompiled(produced, graphId));
    if (!isFactory) this.compiled.set(graphId, graph);
    return graph;
  }

  /**
   * Our checkpointer and store go on a copy: the exported graph is a module singleton
   * that other registries in the same process (tests, several servers) also use.
   */
  private attach(graph: GraphLike): GraphLike {
    const own = ownCopy(graph);
    own.checkpointer = this.attachments.checkpointer;
    own.store = this.attachments.store;
    return own;
  }
}

function isFactoryExport(source: unknown): boolean {
  return typeof source === "function" && !looksLikeGraph(source) && !looksLikeBuilder(source);
}

function looksLikeGraph(value: unknown): value is GraphLike {
  const v = value as Partial<GraphLike> | null;
  return !!v && typeof v.invoke === "function" && typeof v.getState === "function" && typeof v.stream === "function";
}

function looksLikeBuilder(value: unknown): value is { compile(): unknown } {
  const v = value as { compile?: unknown } | null;
  return !!v && typeof v.compile === "function" && typeof (v as { invoke?: unknown }).invoke !== "function";
}

function toCompiled(value: unknown, graphId: string): GraphLike {
  if (looksLikeGraph(value)) return value;
  if (looksLikeBuilder(value)) {
    const compiled = value.compile();
    if (looksLikeGraph(compiled)) return compiled;
  }
  const kind =
    value === null
      ? "null"
      : typeof value === "object"
        ? `an object with keys ${
            Object.keys(value as object)
              .slice(0, 8)
              .join(", ") || "none"
          }`
        : `a ${typeof value}`;
  throw new GraphLoadError(`graph "${graphId}": the export is ${kind}, not a compiled graph, a StateGraph, a function returning one, or a promise of one`);
}

/**
 * Imports every graph module of a langgraph.json into a registry and builds the graphs
 * that are not factories, so that a broken graph stops the start (or `--check`) with
 * its own error instead of failing the first run. Factories need a run's config: they
 * are called per use.
 */
export async function loadGraphs(config: LanggraphConfig, attachments: GraphAttachments): Promise<GraphRegistry> {
  const registry = new GraphRegistry(attachments);
  const python = Object.fromEntries(Object.entries(config.graphs).filter(([, spec]) => spec.language === "python"));
  const pythonAuth = config.auth?.language === "python" ? config.auth.module : undefined;
  const pythonApp = config.http.app?.language === "python" ? config.http.app : undefined;
  if (Object.keys(python).length || pythonAuth || pythonApp) {
    const started = await startPythonGraphs(config.root, python, undefined, { auth: pythonAuth, app: pythonApp });
    registry.onClose(() => started.worker.stop());
    registry.pythonAuth = started.auth;
    registry.pythonApp = started.app;
    for (const [graphId, graph] of started.graphs) registry.register(graphId, graph, config.graphs[graphId].description, started.worker.hello?.langgraph);
  }
  try {
    for (const [graphId, spec] of Object.entries(config.graphs)) {
      if (spec.language === "python") continue;
      await loadJsGraph(registry, graphId, spec);
      // Slipway's checkpointer takes its base classes from the copy this graph loaded.
      preferProjectCopy(spec.path);
    }
  } catch (error) {
    await registry.close();
    throw error;
  }
  return registry;
}

async function loadJsGraph(registry: GraphRegistry, graphId: string, spec: GraphSpec): Promise<void> {
  const source = await importGraphExport(graphId, spec.path, spec.exportName);
  registry.register(graphId, source, spec.description, langgraphVersionFor(spec.path));
  if (isFactoryExport(source)) return;
  try {
    await registry.resolve(graphId);
  } catch (error) {
    if (error instanceof GraphLoadError) throw new GraphLoadError(`${error.message} (${spec.path}, export "${spec.exportName}")`, { graphId, file: spec.path });
    throw new GraphLoadError(`graph "${graphId}": building the export "${spec.exportName}" of ${spec.path} failed: ${(error as Error).message}`, {
      graphId,
      file: spec.path,
      cause: error,
    });
  }
}
