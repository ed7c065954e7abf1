import type { Queryable } from "../../storage/database.ts";
import type { GraphLike, GraphRegistry } from "../graphs/registry.ts";
import { findAssistant } from "./repository.ts";
import { systemAssistantId } from "./service.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface ThreadLike {
  thread_id?: string;
  metadata?: Record<string, unknown> | null;
  config?: Record<string, unknown> | null;
}

/**
 * The graph a thread's state is read and written through (`graphId` is the thread's
 * `metadata.graph_id`). A graph exported as a factory of its config is built with the
 * config of the thread's assistant, as its runs are: a default build may lack the
 * nodes that assistant's config adds, and `as_node` would name a node that does not
 * exist. Static graphs need no lookup.
 */
export async function graphForThread(deps: { db: Queryable; graphs: GraphRegistry }, graphId: string, thread: ThreadLike): Promise<GraphLike> {
  if (!deps.graphs.isFactory(graphId)) return deps.graphs.resolve(graphId);
  return deps.graphs.resolve(graphId, await threadGraphConfig(deps.db, graphId, thread));
}

/**
 * The thread's assistant (`metadata.assistant_id`, else the system assistant of its
 * graph): its config under the thread's own, its context, and the thread's ids.
 */
async function threadGraphConfig(db: Queryable, graphId: string, thread: ThreadLike): Promise<Record<string, unknown>> {
  const named = thread.metadata?.assistant_id;
  let assistant = typeof named === "string" && UUID.test(named) ? await findAssistant(db, named.toLowerCase()) : undefined;
  if (!assistant || assistant.graph_id !== graphId) assistant = await findAssistant(db, systemAssistantId(graphId));
  const base = assistant?.config ?? {};
  const own = thread.config ?? {};
  return {
    ...base,
    ...own,
    configurable: {
      ...(base.configurable as Record<string, unknown> | undefined),
      ...(own.configurable as Record<string, unknown> | undefined),
      graph_id: graphId,
      ...(assistant ? { assistant_id: assistant.assistant_id } : {}),
      ...(thread.thread_id ? { thread_id: thread.thread_id } : {}),
    },
    context: assistant?.context ?? {},
  };
}
