import type { Item, Operation, SearchItem } from "@langchain/langgraph-checkpoint";

/** The store method a Python graph's store calls back into (SlipwayStore). */
export interface CallbackStore {
  batch(operations: Operation[]): Promise<unknown[]>;
}

/** One operation as the worker sends it (python/slipway_worker/remote_store.py). */
type WireOp =
  | { kind: "get"; namespace: string[]; key: string }
  | { kind: "search"; namespace_prefix: string[]; filter?: Record<string, unknown> | null; limit: number; offset: number; query?: string | null }
  | { kind: "put"; namespace: string[]; key: string; value: Record<string, unknown> | null; index?: false | string[] | null }
  | {
      kind: "list_namespaces";
      match_conditions: { match_type: "prefix" | "suffix"; path: string[] }[];
      max_depth?: number | null;
      limit: number;
      offset: number;
    };

function operationOf(op: WireOp): Operation {
  switch (op.kind) {
    case "get":
      return { namespace: op.namespace, key: op.key };
    case "search":
      return { namespacePrefix: op.namespace_prefix, filter: op.filter ?? undefined, limit: op.limit, offset: op.offset, query: op.query ?? undefined };
    case "put":
      return { namespace: op.namespace, key: op.key, value: op.value, ...(op.index === null || op.index === undefined ? {} : { index: op.index }) };
    case "list_namespaces":
      return {
        matchConditions: op.match_conditions.map((c) => ({ matchType: c.match_type, path: c.path })),
        maxDepth: op.max_depth ?? undefined,
        limit: op.limit,
        offset: op.offset,
      };
  }
}

function itemToWire(item: Item | SearchItem): Record<string, unknown> {
  const time = (value: Date | string) => (value instanceof Date ? value.toISOString() : value);
  return {
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: time(item.createdAt),
    updated_at: time(item.updatedAt),
    ...("score" in item && item.score !== undefined ? { score: item.score } : {}),
  };
}

/** Answers the worker's `store.batch` with `store`: the same store the API's /store routes use. */
export async function answerStoreCallback(store: CallbackStore, args: Record<string, unknown>): Promise<unknown[]> {
  const ops = args.ops as WireOp[];
  const results = await store.batch(ops.map(operationOf));
  return results.map((result, i) => {
    const kind = ops[i].kind;
    if (kind === "get") return result ? itemToWire(result as Item) : null;
    if (kind === "search") return (result as SearchItem[]).map(itemToWire);
    if (kind === "list_namespaces") return result;
    return null;
  });
}
