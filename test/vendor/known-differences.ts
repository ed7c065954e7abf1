import { normalise, omitWithin } from "./normalise.ts";

/** One event of an SSE stream, as the SDK yields it. */
export type Part = { event: string; data: unknown; id?: string };

/**
 * Known differences in what a run carries, dropped before comparing streams and states
 * (each is listed in docs/decisions/0019-vendor-side-by-side.md):
 * - configurable: since the vendor's checkpointer copies the run's configurable into each
 *   checkpoint (below), the request headers and the user's `user_id` a run got also show in
 *   the configs of states read back from checkpoints;
 * - subgraph configs: ours carries `run_name` (the subgraph's name) in debug payloads.
 */
const VENDOR_CONFIGURABLE = ["user_id", "user-agent", "x-user-from-middleware"];
export function runAlike(value: unknown): unknown {
  let result = normalise(value);
  result = omitWithin(result, "configurable", VENDOR_CONFIGURABLE);
  for (const parent of ["config", "parent_config"]) result = omitWithin(result, parent, ["run_name"]);
  return result;
}
/**
 * A stream's parts, compared alike. Without their SSE ids: those are compared in their
 * own test, and differ where the vendor sends extra events (`checkpoints`) or none at all
 * (stateless runs).
 */
export function partsAlike(parts: Part[]): unknown {
  return parts.map(({ id: _id, ...part }) => runAlike(part));
}

/**
 * Thread states compared alike, beyond runAlike():
 * - checkpoint metadata: the vendor's checkpointer copies the run's configurable into it
 *   (storage/checkpoint.mjs put(): the user, headers, and in subgraphs LangGraph's task
 *   keys); ours stores the run's metadata only, without LangGraph's per-task keys;
 * - ours adds the state's pending `interrupts` at the top of each state, as the
 *   vendor's Python server does; the JS server has them only on tasks.
 */
const CONFIGURABLE_IN_CHECKPOINTS = [
  ...VENDOR_CONFIGURABLE,
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
  "checkpoint_map",
  "checkpoint_ns",
  "langgraph_checkpoint_ns",
  "langgraph_node",
  "langgraph_path",
  "langgraph_step",
  "langgraph_triggers",
];
export function stateAlike(value: unknown): unknown {
  const walk = (inner: unknown): unknown => {
    if (Array.isArray(inner)) return inner.map(walk);
    if (!inner || typeof inner !== "object") return inner;
    const isState = "values" in inner && "next" in inner && "tasks" in inner;
    return Object.fromEntries(
      Object.entries(inner)
        .filter(([key]) => !(isState && key === "interrupts"))
        .map(([key, item]) => [key, walk(item)]),
    );
  };
  return walk(omitWithin(runAlike(value), "metadata", CONFIGURABLE_IN_CHECKPOINTS));
}
