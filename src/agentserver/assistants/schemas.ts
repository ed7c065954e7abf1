import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { PageLimit, PageOffset, SqlInteger } from "../../http/bounds.ts";

/**
 * Wire records of the assistants group, named and shaped as in the vendor's
 * agent-server OpenAPI document. Requests refuse unknown fields (422 naming them) and,
 * like the vendor's, `null` where its schema has none (the server's type coercion turns
 * a null string into "", so names are `minLength: 1` to keep refusing it). Enums are plain JSON Schema
 * `enum`s, which give one clear message ("Input should be ...") when refused.
 * Free-form objects are declared `additionalProperties: true` so the response
 * serializer keeps their contents.
 */
const strict = { additionalProperties: false } as const;
const Json = (description: string, title?: string) => Type.Object({}, { additionalProperties: true, description, title });
// Null first: the server coerces types (for query strings), and a string branch tried
// first would turn null into "". The price: an empty string arrives as null.
const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([Type.Null(), schema]));
const literals = <T extends readonly string[]>(values: T, options: { description?: string; default?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });

const SORT_FIELDS = ["assistant_id", "created_at", "updated_at", "name", "graph_id"] as const;
const SELECT_FIELDS = ["assistant_id", "graph_id", "name", "description", "config", "context", "created_at", "updated_at", "metadata", "version"] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SelectField = (typeof SELECT_FIELDS)[number];

export { ErrorResponse } from "../route-helpers.ts";

const Config = Type.Object(
  {
    tags: Type.Optional(Type.Array(Type.String())),
    recursion_limit: Type.Optional(Type.Integer()),
    configurable: Type.Optional(Json("Values for the graph's configurable fields.", "Configurable")),
  },
  { additionalProperties: true, title: "Config", description: "The assistant config." },
);

export const Assistant = Type.Object(
  {
    assistant_id: Type.String({ format: "uuid", description: "The ID of the assistant." }),
    graph_id: Type.String({ description: "The ID of the graph." }),
    config: Config,
    context: Json("Static context added to the assistant.", "Context"),
    created_at: Type.String({ format: "date-time", description: "The time the assistant was created." }),
    updated_at: Type.String({ format: "date-time", description: "The last time the assistant was updated." }),
    metadata: Json("The assistant metadata.", "Metadata"),
    version: Type.Integer({ description: "The version of the assistant" }),
    name: Type.String({ description: "The name of the assistant" }),
    description: Type.Union([Type.String(), Type.Null()], { description: "The description of the assistant" }),
  },
  // Every field is required here: the vendor requires six of them and we always send all ten.
  { title: "Assistant" },
);
export type Assistant = Static<typeof Assistant>;
export const AssistantList = Type.Array(Assistant);

const graphId = (description: string) => Type.String({ minLength: 1, description });

export const AssistantCreate = Type.Object(
  {
    assistant_id: Type.Optional(Type.String({ format: "uuid", description: "The ID of the assistant. If not provided, a random UUID will be generated." })),
    graph_id: graphId("The ID of the graph the assistant should use, as named in langgraph.json."),
    // The vendor's request schema says only "object"; its response schema types these keys,
    // and a value that breaks them could not be sent back, so they are checked on the way in.
    config: Type.Optional(Config),
    context: Type.Optional(Json("Static context added to the assistant.")),
    metadata: Type.Optional(Json("Metadata to add to assistant.")),
    if_exists: Type.Optional(
      literals(["raise", "do_nothing"] as const, {
        default: "raise",
        description: "How to handle duplicate creation: 'raise' (409) or 'do_nothing' (return the existing assistant).",
      }),
    ),
    name: Type.Optional(Type.String({ minLength: 1, description: "The name of the assistant. Defaults to 'Untitled'." })),
    description: nullable(Type.String({ description: "The description of the assistant. Defaults to null." })),
  },
  { ...strict, title: "AssistantCreate", description: "Payload for creating an assistant." },
);
export type AssistantCreate = Static<typeof AssistantCreate>;

export const AssistantPatch = Type.Object(
  {
    graph_id: Type.Optional(graphId("The graph the assistant should use; kept when absent.")),
    config: Type.Optional(Config),
    context: Type.Optional(Json("Static context; replaces the current one when given.")),
    metadata: Type.Optional(Json("Metadata to merge with existing assistant metadata.")),
    name: Type.Optional(Type.String({ minLength: 1, description: "The new name; kept when absent." })),
    description: nullable(Type.String({ description: "The new description; kept when absent, cleared by null." })),
  },
  { ...strict, title: "AssistantPatch", description: "Payload for updating an assistant. Every update creates a new version." },
);
export type AssistantPatch = Static<typeof AssistantPatch>;

const filterFields = {
  metadata: Type.Optional(Json("Metadata to filter by. Exact match filter for each KV pair.")),
  graph_id: Type.Optional(Type.String({ description: "The ID of the graph to filter by." })),
  name: Type.Optional(Type.String({ description: "Case-insensitive substring of the assistant name." })),
};
const limit = (what: string) => PageLimit({ maximum: 1000, default: 10, description: `The maximum number of ${what} to return.` });
const offset = (what: string) => PageOffset({ description: `The number of ${what} to skip.` });

export const AssistantSearchRequest = Type.Object(
  {
    ...filterFields,
    limit: Type.Optional(limit("results")),
    offset: Type.Optional(offset("results")),
    sort_by: Type.Optional(literals(SORT_FIELDS, { description: "The field to sort by (default created_at)." })),
    sort_order: Type.Optional(literals(["asc", "desc"] as const, { description: "The order to sort by (default desc)." })),
    select: Type.Optional(Type.Array(literals(SELECT_FIELDS), { description: "Fields to return; all when absent." })),
  },
  { ...strict, title: "AssistantSearchRequest", description: "Payload for listing assistants." },
);
export type AssistantSearchRequest = Static<typeof AssistantSearchRequest>;

export const AssistantCountRequest = Type.Object(filterFields, {
  ...strict,
  title: "AssistantCountRequest",
  description: "Payload for counting assistants.",
});
export type AssistantCountRequest = Static<typeof AssistantCountRequest>;

export const AssistantVersionsSearchRequest = Type.Object(
  {
    metadata: Type.Optional(Json("Metadata to filter versions by. Exact match filter for each KV pair.")),
    limit: Type.Optional(limit("versions")),
    offset: Type.Optional(offset("versions")),
  },
  { ...strict, title: "AssistantVersionsSearchRequest", description: "Payload for listing assistant versions." },
);
export type AssistantVersionsSearchRequest = Static<typeof AssistantVersionsSearchRequest>;

export const AssistantVersionChange = Type.Object(
  { version: Type.Optional(SqlInteger({ minimum: 1, description: "The assistant version." })) },
  { ...strict, title: "AssistantVersionChange", description: "Payload for changing the version of an assistant." },
);
export type AssistantVersionChange = Static<typeof AssistantVersionChange>;

export const VersionQuery = Type.Object(
  { version: Type.Optional(SqlInteger({ minimum: 1, description: "The version to change to (also accepted in the body)." })) },
  strict,
);

export const AssistantIdParams = Type.Object(
  { assistant_id: Type.String({ description: "The ID of the assistant, or a graph ID for its system assistant." }) },
  strict,
);
export type AssistantIdParams = Static<typeof AssistantIdParams>;

export const NamespaceParams = Type.Object(
  { assistant_id: Type.String({ description: "The ID of the assistant." }), namespace: Type.String({ description: "Namespace of the subgraph." }) },
  strict,
);
export type NamespaceParams = Static<typeof NamespaceParams>;

export const DeleteQuery = Type.Object(
  {
    delete_threads: Type.Optional(Type.Boolean({ default: false, description: "Also delete the threads whose metadata.assistant_id is this assistant." })),
  },
  strict,
);
export type DeleteQuery = Static<typeof DeleteQuery>;

export const XrayQuery = Type.Object(
  {
    xray: Type.Optional(
      Type.Union([Type.Boolean(), Type.Integer({ minimum: 0 })], {
        default: false,
        description: "Include subgraphs; an integer limits the depth.",
      }),
    ),
  },
  strict,
);
export type XrayQuery = Static<typeof XrayQuery>;

export const RecurseQuery = Type.Object(
  { recurse: Type.Optional(Type.Boolean({ default: false, description: "Recursively retrieve subgraphs of subgraphs." })) },
  strict,
);
export type RecurseQuery = Static<typeof RecurseQuery>;

const schemaField = (what: string) => Json(`The schema for the graph ${what}. Missing if unable to generate JSON schema from graph.`);
const schemaFields = {
  input_schema: schemaField("input"),
  output_schema: schemaField("output"),
  state_schema: schemaField("state"),
  config_schema: Type.Optional(schemaField("config")),
  context_schema: Type.Optional(schemaField("context")),
};

export const GraphSchema = Type.Object({ graph_id: Type.String({ description: "The ID of the graph." }), ...schemaFields }, { title: "GraphSchema" });
const GraphSchemaNoId = Type.Object(
  {
    ...schemaFields,
    // The vendor's JS server answers subgraphs with these names; both are sent.
    state: Type.Optional(schemaField("state (as the vendor's JS server names it)")),
    input: Type.Optional(schemaField("input (as the vendor's JS server names it)")),
    output: Type.Optional(schemaField("output (as the vendor's JS server names it)")),
    config: Type.Optional(schemaField("config (as the vendor's JS server names it)")),
  },
  { title: "GraphSchemaNoId" },
);
export const Subgraphs = Type.Record(Type.String(), GraphSchemaNoId, {
  title: "Subgraphs",
  description: "Map of graph name to graph schema metadata.",
});

export const DrawableGraph = Type.Object(
  {},
  {
    additionalProperties: Type.Array(Type.Object({}, { additionalProperties: true })),
    description: "The graph drawing: {nodes: [...], edges: [...]}.",
  },
);

export const Count = Type.Integer({ title: "Count" });
export const Anything = Type.Object({}, { additionalProperties: true });
