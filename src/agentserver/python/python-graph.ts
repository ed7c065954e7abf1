import type { GraphSchemas, JsonSchema, SubgraphSchemas } from "../assistants/graph-info.ts";
import type { GraphLike, StateSnapshotLike } from "../graphs/registry.ts";
import { answerCheckpointCallback, type CallbackSaver } from "./checkpoint-callbacks.ts";
import { RunEndStates } from "./run-end-states.ts";
import { answerStoreCallback, type CallbackStore } from "./store-callbacks.ts";
import type { PythonWorker } from "./worker.ts";

/** LangGraph's config key for a checkpointer lent to a graph's state methods (threads/snapshot.ts). */
const LENT_CHECKPOINTER = "__pregel_checkpointer";

type Config = Record<string, unknown> & { configurable?: Record<string, unknown>; signal?: AbortSignal };

/** What the worker's `schemas` answers: pydantic's JSON Schemas, `null` where one cannot be made. */
type WorkerSchemas = Record<"input" | "output" | "state" | "config" | "context", JsonSchema | null>;

function toGraphSchemas(found: WorkerSchemas): GraphSchemas {
  return {
    input_schema: found.input ?? found.state ?? { type: "object" },
    output_schema: found.output ?? found.state ?? { type: "object" },
    state_schema: found.state ?? { type: "object" },
    ...(found.config ? { config_schema: found.config } : {}),
    ...(found.context ? { context_schema: found.context } : {}),
  };
}

/** The part of a JS RunnableConfig that means something to Python, as JSON. */
function pythonConfig(config: Config | undefined): Record<string, unknown> {
  const configurable = Object.fromEntries(Object.entries(config?.configurable ?? {}).filter(([key]) => !key.startsWith("__")));
  const out: Record<string, unknown> = { configurable };
  if (config?.metadata) out.metadata = config.metadata;
  if (Array.isArray(config?.tags) && config.tags.length) out.tags = config.tags;
  if (typeof config?.recursionLimit === "number") out.recursion_limit = config.recursionLimit;
  return out;
}

/** A JS `Command` or `Send` (from any copy of @langchain/langgraph) as the protocol carries it. */
function commandOf(value: unknown): Record<string, unknown> | undefined {
  const v = value as { lg_name?: string; resume?: unknown; update?: unknown; goto?: unknown } | null;
  if (!v || typeof v !== "object" || v.lg_name !== "Command") return undefined;
  const send = (g: unknown) => {
    const s = g as { lg_name?: string; node?: string; args?: unknown };
    return s && typeof s === "object" && s.lg_name === "Send" ? { node: s.node, input: s.args } : g;
  };
  const goto = Array.isArray(v.goto) ? v.goto.map(send) : v.goto === undefined ? undefined : send(v.goto);
  return {
    ...(v.update !== undefined && v.update !== null ? { update: v.update } : {}),
    ...(v.resume !== undefined ? { resume: v.resume } : {}),
    ...(goto !== undefined && !(Array.isArray(goto) && goto.length === 0) ? { goto } : {}),
  };
}

/**
 * A Python graph as the rest of the server sees it: the `GraphLike` the registry hands
 * out, each method a request to the worker (decision 0036, part 5). Checkpoint calls the
 * worker makes while serving a request are answered with this graph's checkpointer, or
 * the one a run's tail lends through the config.
 */
export class PythonGraph implements GraphLike {
  checkpointer?: unknown;
  store?: unknown;
  /** States the worker sent with each run's end; shared by the registry's copies of this graph. */
  private readonly runEnds = new RunEndStates();

  constructor(
    private readonly worker: PythonWorker,
    readonly name: string,
  ) {}

  private handlersFor(config: Config | undefined) {
    const saver = (config?.configurable?.[LENT_CHECKPOINTER] ?? this.checkpointer) as CallbackSaver | undefined;
    return {
      onCallback: (op: string, args: Record<string, unknown>) => {
        if (op === "store.batch") {
          if (!this.store) throw new Error("this graph has no store");
          return answerStoreCallback(this.store as CallbackStore, args);
        }
        if (!saver) throw new Error("this graph has no checkpointer");
        return answerCheckpointCallback(saver, op, args);
      },
    };
  }

  private call(op: string, config: Config | undefined, args: Record<string, unknown> = {}, signal?: AbortSignal): Promise<unknown> {
    return this.worker.request(op, { graph_id: this.name, config: pythonConfig(config), ...args }, this.handlersFor(config), signal);
  }

  async stream(input: unknown, config: Config = {}): Promise<AsyncIterable<unknown>> {
    const subgraphs = config.subgraphs === true;
    return this.streamFromWorker(input, config, {}, (chunk) => {
      const [namespace, mode, data] = chunk as [string[], string, unknown];
      return subgraphs ? [namespace, mode, data] : [mode, data];
    });
  }

  /** LangChain's streamEvents v2 events of the run, for the API's `events` and `messages` modes. */
  streamEvents(input: unknown, config: Config & { runId?: string } = {}): AsyncIterable<unknown> {
    const events = this.streamFromWorker(input, config, { events: true, run_id: config.runId }, (event) => event);
    return (async function* () {
      yield* await events;
    })();
  }

  /** A `run` request, its chunks as an async iterable that ends with the request (and throws its failure). */
  private async streamFromWorker(
    input: unknown,
    config: Config,
    extra: Record<string, unknown>,
    shape: (chunk: unknown) => unknown,
  ): Promise<AsyncIterable<unknown>> {
    const command = commandOf(input);
    const args = {
      ...(command ? { command } : { input: input ?? null }),
      stream_mode: (config.streamMode as string[] | undefined) ?? ["values"],
      subgraphs: config.subgraphs === true,
      interrupt_before: config.interruptBefore ?? null,
      interrupt_after: config.interruptAfter ?? null,
      durability: config.durability ?? null,
      // Always an object, as the vendor's server sends the assistant's: LangGraph makes a
      // graph's context dataclass from it, defaults included; `None` would leave it unset.
      context: config.context ?? {},
      ...extra,
    };
    const chunks: unknown[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: Error | undefined;
    const handlers = {
      ...this.handlersFor(config),
      onChunk: (chunk: unknown) => {
        chunks.push(shape(chunk));
        wake?.();
      },
    };
    const threadId = config.configurable?.thread_id;
    this.worker
      .request("run", { graph_id: this.name, config: pythonConfig(config), ...args }, handlers, config.signal)
      .then(
        (answer) => {
          const state = (answer as { state?: StateSnapshotLike } | null)?.state;
          if (state && typeof threadId === "string") this.runEnds.keep(threadId, state);
          finished = true;
        },
        (error: Error) => {
          failure = error;
          finished = true;
        },
      )
      .finally(() => wake?.());
    return (async function* () {
      while (true) {
        while (chunks.length) yield chunks.shift();
        if (finished) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      while (chunks.length) yield chunks.shift();
      if (failure) throw failure;
    })();
  }

  /** Its JSON Schemas, read by the worker as the vendor's Python server reads them. */
  async jsonSchemas(): Promise<GraphSchemas> {
    return toGraphSchemas((await this.call("schemas", undefined)) as WorkerSchemas);
  }

  /**
   * Its subgraphs' schemas by namespace (`child|grandchild` when recursing), under both the
   * Python server's names and the JS server's (`state`, `input`, ...), as JS graphs answer.
   */
  async subgraphSchemas(namespace: string | undefined, recurse: boolean, config?: Config): Promise<Record<string, SubgraphSchemas>> {
    const found = (await this.call("subgraphs", config, { namespace: namespace ?? null, recurse })) as Record<string, WorkerSchemas>;
    return Object.fromEntries(
      Object.entries(found).map(([ns, schemas]) => {
        const named = toGraphSchemas(schemas);
        const js = {
          state: named.state_schema,
          input: named.input_schema,
          output: named.output_schema,
          ...(named.config_schema ? { config: named.config_schema } : {}),
        };
        return [ns, { ...js, ...named }];
      }),
    );
  }

  async invoke(input: unknown, config: Config = {}): Promise<unknown> {
    let last: unknown;
    for await (const chunk of await this.stream(input, { ...config, streamMode: ["values"], subgraphs: false })) last = (chunk as [string, unknown])[1];
    return last;
  }

  async getState(config: Config, options?: { subgraphs?: boolean }): Promise<StateSnapshotLike> {
    const ended = options?.subgraphs ? undefined : await this.runEnds.answer(config);
    if (ended) return ended;
    return (await this.call("state", config, { subgraphs: options?.subgraphs ?? false })) as StateSnapshotLike;
  }

  async *getStateHistory(
    config: Config,
    options: { limit?: number; before?: Config; filter?: Record<string, unknown> } = {},
  ): AsyncIterable<StateSnapshotLike> {
    const found = (await this.call("history", config, {
      limit: options.limit ?? null,
      before: options.before ? pythonConfig(options.before) : null,
      filter: options.filter ?? null,
    })) as StateSnapshotLike[];
    yield* found;
  }

  async updateState(config: Config, values: unknown, asNode?: string): Promise<unknown> {
    const command = commandOf(values);
    return this.call("update_state", config, { ...(command ? { command } : { values: values ?? null }), as_node: asNode ?? null });
  }

  async getGraphAsync(config?: Config & { xray?: boolean | number }): Promise<{ toJSON(): unknown }> {
    const drawable = await this.call("graph", config, { xray: config?.xray ?? false });
    return { toJSON: () => drawable };
  }
}
