import type { GraphLike } from "./registry.ts";

/**
 * A copy of a compiled graph on which a checkpointer and store may be set without
 * touching the module's own graph (a singleton other registries in the process use).
 *
 * LangGraph.js compiled graphs define `withConfig` to return a graph of their own
 * class from 0.2.41 on; before that (0.2.0 to 0.2.40) the inherited Runnable method
 * returns a RunnableBinding, which has no `getState` and ignores a checkpointer set on
 * it. Such graphs are copied field by field onto their own prototype instead: every
 * field of a Pregel graph is a plain property, its methods read them through `this`.
 */
export function ownCopy(graph: GraphLike): GraphLike {
  if (typeof graph.withConfig === "function") {
    const copy = graph.withConfig({}) as Partial<GraphLike> | null;
    if (copy && typeof copy.getState === "function" && typeof copy.stream === "function") return copy as GraphLike;
  }
  return Object.assign(Object.create(Object.getPrototypeOf(graph)) as GraphLike, graph);
}
