import { ConfigError } from "./langgraph-config.ts";

/** What a graph's system assistant is created with. */
export interface AssistantDefaults {
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/**
 * `LANGGRAPH_CONFIG`, as the vendor's servers read it: a JSON object from graph id to
 * the config of that graph's system assistant (`configurable`, `recursion_limit`,
 * `tags`, ...), whose `context` key is the assistant's context instead. Like the
 * vendor, it applies when the system assistant is created; graph ids the project does
 * not have are ignored. A malformed value stops start-up, naming what is wrong.
 */
export function readAssistantDefaults(raw: string | undefined, graphIds: string[]): Map<string, AssistantDefaults> {
  const defaults = new Map<string, AssistantDefaults>();
  if (raw === undefined || raw.trim() === "") return defaults;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`LANGGRAPH_CONFIG: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed)) throw new ConfigError("LANGGRAPH_CONFIG: must be a JSON object from graph id to {configurable, context, ...}");
  for (const [graphId, entry] of Object.entries(parsed)) {
    if (!isObject(entry)) throw new ConfigError(`LANGGRAPH_CONFIG.${graphId}: must be an object such as {"configurable": {...}}`);
    const { context, ...config } = entry;
    if (context !== undefined && context !== null && !isObject(context)) throw new ConfigError(`LANGGRAPH_CONFIG.${graphId}.context: must be an object`);
    if (config.configurable !== undefined && !isObject(config.configurable)) {
      throw new ConfigError(`LANGGRAPH_CONFIG.${graphId}.configurable: must be an object`);
    }
    if (graphIds.includes(graphId)) defaults.set(graphId, { config, context: (context as Record<string, unknown> | null | undefined) ?? {} });
  }
  return defaults;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
