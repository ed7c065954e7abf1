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

/**
 * The graph whose state methods read through `checkpointer`. From 0.2.9 on LangGraph.js
 * reads a checkpointer given in the config (`__pregel_checkpointer`, which callers pass
 * as well); before, `getState` reads only `this.checkpointer`, so those graphs (the same
 * release brought `getSubgraphs`) get a field copy with it set.
 */
export function readingThrough(graph: GraphLike, checkpointer: unknown): GraphLike {
  const pregel = (graph as { lc_namespace?: unknown }).lc_namespace;
  const before029 = Array.isArray(pregel) && pregel[0] === "langgraph" && typeof (graph as { getSubgraphs?: unknown }).getSubgraphs !== "function";
  if (!before029) return graph;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(graph)) as GraphLike, graph);
  copy.checkpointer = checkpointer;
  return copy;
}
