import { getConfigTypeSchema, getInputTypeSchema, getOutputTypeSchema, getUpdateTypeSchema } from "@langchain/langgraph/zod/schema";
import type { GraphLike } from "../../graphs/registry.ts";
import type { SchemaSet } from "./extract.ts";
import { MESSAGE_DEFINITIONS } from "./message-definitions.ts";
import type { JsonSchema } from "./type-schema.ts";

interface BuilderLike {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
  _metaRegistry?: unknown;
  channels?: Record<string, unknown>;
}

/**
 * Schemas a graph carries at run time: those of a graph declared with zod (v3 or v4,
 * with the metadata of LangGraph's zod registry) or with StateSchema, through
 * @langchain/langgraph's own helpers. The state is written as an update (every
 * channel optional), as the vendor's servers write it. The graph's meta registry is
 * passed along, so a graph from another copy of @langchain/langgraph keeps its
 * reducer and default metadata.
 *
 * Undefined when the graph has no such declaration, or when one of its schemas cannot
 * be converted (a `z.custom` field): the compiler's reading of its types (extract.ts)
 * is asked then, as the vendor does.
 */
export function runtimeSchemas(graph: GraphLike): SchemaSet | undefined {
  const builder = (graph.builder ?? undefined) as BuilderLike | undefined;
  if (!builder) return undefined;
  const registry = builder._metaRegistry as Parameters<typeof getUpdateTypeSchema>[1];
  try {
    const set: SchemaSet = {
      state: getUpdateTypeSchema(graph, registry) as JsonSchema | undefined,
      input: getInputTypeSchema(graph, registry) as JsonSchema | undefined,
      output: getOutputTypeSchema(graph, registry) as JsonSchema | undefined,
      config: getConfigTypeSchema(graph, registry) as JsonSchema | undefined,
    };
    return Object.values(set).some((schema) => schema !== undefined) ? set : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The last resort, when neither run-time schemas nor the compiler's reading are to be
 * had (a JavaScript project, a graph registered in code, a project whose extraction
 * timed out): the types the graph's channels show at run time. A channel reduced with
 * the messages reducer is a list of messages (with `langgraph_type: "messages"`, so a
 * chat view is offered); a channel with a default has that value's type; a topic is a
 * list; a plain channel may hold any JSON value.
 */
export function channelListing(graph: GraphLike, why: string): SchemaSet {
  const builder = (graph.builder ?? undefined) as BuilderLike | undefined;
  const listing = (channels: Record<string, unknown>) => channelSchema(channels, why);
  const state = listing(builder?._schemaDefinition ?? builder?.channels ?? pregelChannels(graph));
  return {
    state,
    input: builder?._inputDefinition ? listing(builder._inputDefinition) : state,
    output: builder?._outputDefinition ? listing(builder._outputDefinition) : state,
  };
}

/** A graph without a builder (functional API, hand-made Pregel): its user-facing channels. */
function pregelChannels(graph: GraphLike): Record<string, unknown> {
  const channels = (graph as { channels?: Record<string, unknown> }).channels ?? {};
  return Object.fromEntries(Object.entries(channels).filter(([name]) => !name.startsWith("__") && !name.includes(":")));
}

function channelSchema(channels: Record<string, unknown>, why: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  let messages = false;
  for (const [name, channel] of Object.entries(channels)) {
    properties[name] = channelValueSchema(channel);
    messages ||= isMessagesChannel(channel);
  }
  const schema: JsonSchema = { type: "object", description: `Types read from the graph's channels at run time: ${why}.`, properties };
  if (messages) schema.definitions = MESSAGE_DEFINITIONS;
  return schema;
}

function channelValueSchema(channel: unknown): JsonSchema {
  if (isMessagesChannel(channel)) return { type: "array", items: { $ref: "#/definitions/BaseMessage" }, langgraph_type: "messages" };
  const made = channel as { initialValueFactory?: unknown; constructor?: { name?: string } } | null;
  if (made && typeof made.initialValueFactory === "function") {
    try {
      return valueSchema((made.initialValueFactory as () => unknown)());
    } catch {
      return {};
    }
  }
  if (made?.constructor?.name === "Topic") return { type: "array" };
  return {};
}

/** The schema of a channel's default value: its JSON type. */
function valueSchema(value: unknown): JsonSchema {
  if (Array.isArray(value)) return { type: "array" };
  if (value === null || value === undefined) return {};
  if (typeof value === "object") return { type: "object" };
  if (typeof value === "number") return { type: "number" };
  if (typeof value === "string" || typeof value === "boolean") return { type: typeof value };
  return {};
}

/** MessagesAnnotation and friends reduce with `messagesStateReducer` (or a wrapper named after it). */
function isMessagesChannel(channel: unknown): boolean {
  const operator = (channel as { operator?: unknown } | null)?.operator;
  return typeof operator === "function" && /messages.*reducer/i.test(operator.name);
}
