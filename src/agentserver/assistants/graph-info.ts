import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { GraphLike } from "../graphs/registry.ts";

/**
 * What the assistants API tells about a graph: its drawing, its subgraphs, and JSON
 * Schemas of its input, output, state and config/context.
 *
 * Schemas come from the graph's definition at run time:
 * - a graph defined with zod (`new StateGraph(z.object(...), { context })`) or with
 *   `StateSchema` gets full JSON Schemas, through @langchain/langgraph's own helpers.
 *   The graph's meta registry (`builder._metaRegistry`) is passed along, so graphs from
 *   another copy of @langchain/langgraph keep their reducer and default metadata;
 * - any other graph (Annotation.Root, plain channel objects) gets an object schema that
 *   lists its channel names without types, plus `langgraph_type: "messages"` on channels
 *   reduced with the messages reducer, which is what Studio reads to offer a chat view.
 *   LIMITATION: unlike the vendor's dev server we do not run the TypeScript compiler over
 *   the graph's source, so the types of Annotation-defined channels are not known.
 * Everything here is duck-typed: the graph may come from another library copy.
 */
export type Xray = boolean | number;
export type JsonSchema = Record<string, unknown>;

export interface GraphSchemas {
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  state_schema: JsonSchema;
  config_schema?: JsonSchema;
  context_schema?: JsonSchema;
}

interface BuilderLike {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
  _configSchema?: Record<string, unknown>;
  _metaRegistry?: unknown;
  channels?: Record<string, unknown>;
}

/** The drawing as `{nodes, edges}` JSON; `xray` expands subgraphs (to that depth when a number). */
export async function drawGraph(graph: GraphLike, config: Record<string, unknown>, xray: Xray): Promise<Record<string, unknown[]>> {
  const options = { ...config, xray: xray === 0 ? false : xray };
  const drawable = graph.getGraphAsync ? await graph.getGraphAsync(options) : graph.getGraph?.(options);
  if (!drawable) return { nodes: [], edges: [] };
  // Through JSON once: node data may hold class instances the serializer should not see.
  return JSON.parse(JSON.stringify(drawable.toJSON()));
}

/** The subgraphs under `namespace` (all when undefined), keyed by namespace (`a|b` when recursing). */
export async function listSubgraphs(graph: GraphLike, namespace: string | undefined, recurse: boolean): Promise<Record<string, GraphSchemas>> {
  const result: Record<string, GraphSchemas> = {};
  const legacy = (graph as { getSubgraphs?: (ns?: string, recurse?: boolean) => Iterable<[string, GraphLike]> }).getSubgraphs;
  const found: AsyncIterable<[string, GraphLike]> | Iterable<[string, GraphLike]> | undefined = graph.getSubgraphsAsync
    ? graph.getSubgraphsAsync(namespace, recurse)
    : legacy?.call(graph, namespace, recurse);
  if (!found) return result;
  for await (const [ns, subgraph] of found) result[ns] = graphSchemas(subgraph);
  return result;
}

/** The JSON Schemas of a graph: derived from zod/StateSchema when it has them, else its channel names. */
export function graphSchemas(graph: GraphLike): GraphSchemas {
  const builder = (graph.builder ?? undefined) as BuilderLike | undefined;
  const registry = builder?._metaRegistry as Parameters<typeof getStateTypeSchema>[1];
  const derive = (helper: typeof getStateTypeSchema): JsonSchema | undefined => {
    try {
      return (helper(graph, registry) as JsonSchema | undefined) ?? undefined;
    } catch {
      // A schema the helpers cannot convert falls back to the channel listing.
      return undefined;
    }
  };
  const state = derive(getStateTypeSchema) ?? channelSchema(builder?._schemaDefinition ?? builder?.channels ?? pregelChannels(graph), "State");
  const config = derive(getConfigTypeSchema) ?? (builder?._configSchema ? channelSchema(builder._configSchema, "Config") : undefined);
  const schemas: GraphSchemas = {
    input_schema: derive(getInputTypeSchema) ?? (builder?._inputDefinition ? channelSchema(builder._inputDefinition, "Input") : state),
    output_schema: derive(getOutputTypeSchema) ?? (builder?._outputDefinition ? channelSchema(builder._outputDefinition, "Output") : state),
    state_schema: state,
  };
  // From JavaScript the config schema and the context schema are one and the same (`context:` of StateGraph).
  if (config) {
    schemas.config_schema = config;
    schemas.context_schema = config;
  }
  return schemas;
}

/** A graph without a builder (functional API, hand-made Pregel): its user-facing channels. */
function pregelChannels(graph: GraphLike): Record<string, unknown> {
  const channels = (graph as { channels?: Record<string, unknown> }).channels ?? {};
  return Object.fromEntries(Object.entries(channels).filter(([name]) => !name.startsWith("__") && !name.includes(":")));
}

function channelSchema(channels: Record<string, unknown>, title: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, channel] of Object.entries(channels)) properties[name] = isMessagesChannel(channel) ? { langgraph_type: "messages" } : {};
  return {
    type: "object",
    title,
    description: "Channel names only: this graph is not defined with zod, so the channel types are unknown.",
    properties,
  };
}

/** MessagesAnnotation and friends reduce with `messagesStateReducer` (or a wrapper named after it). */
function isMessagesChannel(channel: unknown): boolean {
  const operator = (channel as { operator?: unknown } | null)?.operator;
  return typeof operator === "function" && /messages.*reducer/i.test(operator.name);
}
