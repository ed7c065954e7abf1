/**
 * The `debug`, `checkpoints` and `tasks` stream payloads as the vendor's JS server sends
 * them, not as LangGraph yields them: a checkpoint event carries `checkpoint` and
 * `parent_checkpoint` ({thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}) beside
 * its configs, `parentConfig` is named `parent_config`, internal `__`-prefixed
 * configurable keys are left out, and a task whose state is a subgraph's config
 * carries that as `checkpoint` instead.
 */
type Config = { configurable?: Record<string, unknown>; [key: string]: unknown };

interface CheckpointPayload {
  config?: Config;
  parentConfig?: Config;
  /** Python's LangGraph (a graph of the Python worker, decision 0036) names it so already. */
  parent_config?: Config;
  tasks?: unknown[];
  [key: string]: unknown;
}

interface WireCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}

/** A library stream payload of `mode`, reshaped where the vendor reshapes it. */
export function reshapePayload(mode: string, data: unknown): unknown {
  if (mode === "checkpoints") return reshapeCheckpoint(data as CheckpointPayload);
  if (mode === "tasks") return reshapeTask(data);
  if (mode !== "debug" || !data || typeof data !== "object") return data;
  const chunk = data as { type?: string; payload?: unknown };
  if (chunk.type === "checkpoint") return { ...chunk, payload: reshapeCheckpoint(chunk.payload as CheckpointPayload) };
  if (chunk.type === "task_result") return { ...chunk, payload: reshapeTask(chunk.payload) };
  return data;
}

function reshapeCheckpoint(payload: CheckpointPayload): unknown {
  if (!payload || typeof payload !== "object") return payload;
  const { parentConfig: jsParent, parent_config: pyParent, ...rest } = payload;
  const parentConfig = jsParent ?? pyParent ?? undefined;
  return {
    ...rest,
    config: withoutInternals(payload.config),
    parent_config: withoutInternals(parentConfig),
    checkpoint: checkpointOf(payload.config, true),
    parent_checkpoint: checkpointOf(parentConfig, true),
    tasks: Array.isArray(payload.tasks) ? payload.tasks.map(reshapeTask) : payload.tasks,
  };
}

function reshapeTask(task: unknown): unknown {
  if (!task || typeof task !== "object") return task;
  const { state, ...rest } = task as { state?: unknown };
  const checkpoint = checkpointOf(state as Config | undefined, false);
  return checkpoint ? { ...rest, checkpoint } : task;
}

/**
 * The checkpoint a config points at; null when it names none. A checkpoint's own
 * config must have an id (`required`); a subgraph task's may not have one yet.
 */
function checkpointOf(config: Config | undefined, required: boolean): WireCheckpoint | null {
  const c = config?.configurable;
  if (!c || typeof c.thread_id !== "string") return null;
  const id = typeof c.checkpoint_id === "string" && c.checkpoint_id ? c.checkpoint_id : null;
  if (required && !id) return null;
  const map = c.checkpoint_map && typeof c.checkpoint_map === "object" ? (c.checkpoint_map as Record<string, unknown>) : null;
  return { thread_id: c.thread_id, checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "", checkpoint_id: id, checkpoint_map: map };
}

function withoutInternals(config: Config | undefined): Config | undefined {
  if (!config?.configurable) return config;
  const { callbacks: _callbacks, ...rest } = config;
  return { ...rest, configurable: Object.fromEntries(Object.entries(config.configurable).filter(([key]) => !key.startsWith("__"))) };
}
