/**
 * Constants and a helper of LangGraph's checkpoint format, as `@langchain/langgraph-checkpoint`
 * defines them, for code that runs synchronously before that package is loaded (it loads at
 * first use: checkpoint-package.ts). format.test.ts checks them against the package.
 */

/** Indexes of special writes: `WRITES_IDX_MAP` of the package. */
export const WRITES_IDX_MAP: Record<string, number> = { __error__: -1, __scheduled__: -2, __interrupt__: -3, __resume__: -4 };

/** LangGraph's per-task bookkeeping keys, left out of stored metadata: `EXCLUDED_METADATA_KEYS` of the package. */
export const EXCLUDED_METADATA_KEYS: ReadonlySet<string> = new Set([
  "thread_id",
  "checkpoint_id",
  "checkpoint_ns",
  "checkpoint_map",
  "langgraph_step",
  "langgraph_node",
  "langgraph_triggers",
  "langgraph_path",
  "langgraph_checkpoint_ns",
]);

/** The checkpoint a config names, or "": `getCheckpointId` of the package. */
export function getCheckpointId(config: { configurable?: Record<string, unknown> }): string {
  return (config.configurable?.checkpoint_id || config.configurable?.thread_ts || "") as string;
}
