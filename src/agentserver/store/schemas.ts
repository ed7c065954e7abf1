import { Type, type Static } from "@sinclair/typebox";
import { Duration, PageLimit, PageOffset, SqlInteger } from "../../http/bounds.ts";

/**
 * Wire records of the /store API, named and shaped as in the vendor's agent-server
 * OpenAPI document. Requests refuse unknown fields.
 */
const Namespace = Type.Array(Type.String(), { description: "A list of strings representing the namespace path." });
const Document = Type.Object({}, { additionalProperties: true, description: "A dictionary containing the item's data." });
const strict = { additionalProperties: false } as const;

export const StorePutRequest = Type.Object(
  {
    namespace: Namespace,
    key: Type.String({ description: "The unique identifier for the item within the namespace." }),
    value: Document,
    index: Type.Optional(
      Type.Union([Type.Literal(false), Type.Array(Type.String()), Type.Null()], {
        description: "false or null. A list of field paths needs a vector index, which this server does not have: 422.",
      }),
    ),
    ttl: Type.Optional(
      Type.Union([Duration("minutes", { exclusiveMinimum: 0 }), Type.Null()], {
        description: "Time-to-live in minutes; null for no expiration; absent for the server's default.",
      }),
    ),
  },
  { ...strict, title: "StorePutRequest" },
);

export const StoreDeleteRequest = Type.Object({ namespace: Type.Optional(Namespace), key: Type.String() }, { ...strict, title: "StoreDeleteRequest" });

export const StoreGetQuery = Type.Object(
  {
    key: Type.String(),
    namespace: Type.Optional(Type.Array(Type.String(), { description: "The namespace, its labels joined with '.'." })),
    refresh_ttl: Type.Optional(Type.Boolean({ description: "Whether to refresh the TTL on this read." })),
  },
  strict,
);

export const StoreSearchRequest = Type.Object(
  {
    namespace_prefix: Type.Optional(Type.Union([Namespace, Type.Null()])),
    filter: Type.Optional(
      Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
        description: "Equality on value fields, or {field: {$eq|$ne|$gt|$gte|$lt|$lte: x}}.",
      }),
    ),
    limit: PageLimit({ default: 10, minimum: 0 }),
    offset: PageOffset(),
    query: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "Natural-language search; refused: no embedding index." })),
    refresh_ttl: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { ...strict, title: "StoreSearchRequest" },
);

export const StoreListNamespacesRequest = Type.Object(
  {
    prefix: Type.Optional(Type.Array(Type.String(), { description: "Labels; '*' matches any one label." })),
    suffix: Type.Optional(Type.Array(Type.String(), { description: "Labels; '*' matches any one label." })),
    max_depth: Type.Optional(SqlInteger({ minimum: 1 })),
    limit: PageLimit({ default: 100, minimum: 0 }),
    offset: PageOffset(),
  },
  { ...strict, title: "StoreListNamespacesRequest" },
);

const itemFields = {
  namespace: Namespace,
  key: Type.String(),
  value: Document,
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
};
export const Item = Type.Object(itemFields, { title: "Item" });
export const SearchItemsResponse = Type.Object(
  { items: Type.Array(Type.Object({ ...itemFields, score: Type.Optional(Type.Union([Type.Number(), Type.Null()])) })) },
  { title: "SearchItemsResponse" },
);
// The vendor's document shows a bare list, but its SDKs (JS and Python) and its JS
// server use {"namespaces": [...]}; clients are what must keep working.
export const ListNamespaceResponse = Type.Object({ namespaces: Type.Array(Type.Array(Type.String())) }, { title: "ListNamespaceResponse" });
export { ErrorResponse } from "../route-helpers.ts";
export const NoContent = Type.Null({ description: "Success" });

export type StorePutRequest = Static<typeof StorePutRequest>;
export type StoreDeleteRequest = Static<typeof StoreDeleteRequest>;
export type StoreGetQuery = Static<typeof StoreGetQuery>;
export type StoreSearchRequest = Static<typeof StoreSearchRequest>;
export type StoreListNamespacesRequest = Static<typeof StoreListNamespacesRequest>;
export type WireItem = Static<typeof Item>;
