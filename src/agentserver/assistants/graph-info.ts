import type { GraphLike } from "../graphs/registry.ts";
import type { SchemaSet } from "./graph-schemas/extract.ts";
import type { JsonSchema } from "./graph-schemas/type-schema.ts";

/**
 * What the assistants API tells about a graph: its drawing, its subgraphs, and JSON
 * Schemas of its input, output, state and config/context.
 *
 * Schemas come, in this order, from
 * 1. the graph itself at run time: zod (v3, v4, LangGraph's registry) or StateSchema;
 * 2. the TypeScript compiler's reading of the project's types (graph-schemas/), for
 *    Annotation.Root, MessagesAnnotation and TypeScript-typed channels;
 * 3. failing both, the types the graph's channels show at run time (messages, defaults).
 * Everything here is duck-typed: the graph may come from another library copy.
 */
export type Xray = boolean | number;
export type { JsonSchema };

export interface GraphSchemas {
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  state_schema: JsonSchema;
  config_schema?: JsonSchema;
  context_schema?: JsonSchema;
}

/**
 * A subgraph's schemas, under the names the vendor's JS server answers with (`state`,
 * `input`, `output`, `config`) and under the names of its documented GraphSchema, which
 * the SDK's `Subgraphs` type declares: a client of either finds what it reads.
 */
export type SubgraphSchemas = GraphSchemas & SchemaSet;

/** The compiler's schemas of a graph by namespace ("" for the graph itself), when it has any. */
export type StaticLookup = () => Promise<Record<string, SchemaSet> | undefined>;

/** The drawing as `{nodes, edges}` JSON; `xray` expands subgraphs (to that depth when a number). */
export async function drawGraph(graph: GraphLike, config: Record<string, unknown>, xray: Xray): Promise<Record<string, unknown[]>> {
  const options = { ...config, xray: xray === 0 ? false : xray };
  const drawable = graph.getGraphAsync ? await graph.getGraphAsync(options) : graph.getGraph?.(options);
  if (!drawable) return { nodes: [], edges: [] };
  // Through JSON once: node data may hold class instances the serializer should not see.
  return JSON.parse(JSON.stringify(drawable.toJSON()));
}

/** The JSON Schemas of a graph; `lookup` is asked only when the graph has no run-time schemas. */
export async function graphSchemas(graph: GraphLike, lookup: StaticLookup): Promise<GraphSchemas> {
  // A graph in another language reads its own (a Python graph, through its worker).
  const own = (graph as { jsonSchemas?: () => Promise<GraphSchemas> }).jsonSchemas;
  if (typeof own === "function") return own.call(graph);
  return toGraphSchemas(await schemaSet(graph, async () => (await lookup())?.[""]));
}

/** The subgraphs under `namespace` (all when undefined), keyed by namespace (`a|b` when recursing). */
export async function listSubgraphs(
  graph: GraphLike,
  namespace: string | undefined,
  recurse: boolean,
  lookup: StaticLookup,
  config?: Record<string, unknown>,
): Promise<Record<string, SubgraphSchemas>> {
  // A graph in another language lists its own (a Python graph, through its worker).
  const own = (
    graph as { subgraphSchemas?: (ns: string | undefined, recurse: boolean, config?: Record<string, unknown>) => Promise<Record<string, SubgraphSchemas>> }
  ).subgraphSchemas;
  if (typeof own === "function") return own.call(graph, namespace, recurse, config);
  const result: Record<string, SubgraphSchemas> = {};
  const legacy = (graph as { getSubgraphs?: (ns?: string, recurse?: boolean) => Iterable<[string, GraphLike]> }).getSubgraphs;
  const found: AsyncIterable<[string, GraphLike]> | Iterable<[string, GraphLike]> | undefined = graph.getSubgraphsAsync
    ? graph.getSubgraphsAsync(namespace, recurse)
    : legacy?.call(graph, namespace, recurse);
  if (!found) return result;
  for await (const [ns, subgraph] of found) {
    // The compiler's schemas are keyed by node names from the root, which is what `ns` is.
    const set = await schemaSet(subgraph, async () => (await lookup())?.[ns]);
    result[ns] = { ...set, ...toGraphSchemas(set) };
  }
  return result;
}

async function schemaSet(graph: GraphLike, fromTypes: () => Promise<SchemaSet | undefined>): Promise<SchemaSet> {
  // LangGraph's zod helpers (and so @langchain/langgraph) are loaded at the first schema asked for, not at start.
  const { channelListing, runtimeSchemas } = await import("./graph-schemas/runtime-schemas.ts");
  const runtime = runtimeSchemas(graph);
  if (runtime) return runtime;
  const typed = await fromTypes();
  if (typed) return inChannelOrder(typed, graph);
  return channelListing(graph, "this graph has no zod schemas and its TypeScript types could not be read");
}

/**
 * The compiler lists a spread's fields after the others (`...MessagesAnnotation.spec`
 * comes out last on LangGraph.js before 1.x); the graph's channels at run time are in
 * the order they were declared, which is the order forms should show.
 */
function inChannelOrder(set: SchemaSet, graph: GraphLike): SchemaSet {
  const builder = (graph.builder ?? {}) as { _schemaDefinition?: object; channels?: object; _inputDefinition?: object; _outputDefinition?: object };
  const state = Object.keys(builder._schemaDefinition ?? builder.channels ?? {});
  const reorder = (schema: JsonSchema | undefined, order: string[]) => {
    const properties = schema?.properties as Record<string, unknown> | undefined;
    if (!schema || !properties) return schema;
    const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    const names = Object.keys(properties).sort((a, b) => rank(a) - rank(b));
    return { ...schema, properties: Object.fromEntries(names.map((name) => [name, properties[name]])) };
  };
  return {
    ...set,
    state: reorder(set.state, state),
    input: reorder(set.input, builder._inputDefinition ? Object.keys(builder._inputDefinition) : state),
    output: reorder(set.output, builder._outputDefinition ? Object.keys(builder._outputDefinition) : state),
  };
}

function toGraphSchemas(set: SchemaSet): GraphSchemas {
  const state = set.state ?? set.input ?? { type: "object" };
  const schemas: GraphSchemas = {
    input_schema: set.input ?? state,
    output_schema: set.output ?? state,
    state_schema: state,
  };
  // From JavaScript the config schema and the context schema are one and the same (`context:` of StateGraph).
  if (set.config) {
    schemas.config_schema = set.config;
    schemas.context_schema = set.config;
  }
  return schemas;
}
