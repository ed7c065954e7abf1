import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Item } from "@langchain/langgraph-checkpoint";
import { invalidField, notFound } from "../../http/errors.ts";
import { matches } from "../custom-auth/filters.ts";
import { requestFilters } from "../custom-auth/request-filters.ts";
import { SEPARATOR, keyProblem, namespaceProblem } from "./namespace.ts";
import type { SlipwayStore } from "./store.ts";
import * as S from "./schemas.ts";
import { errorResponses } from "../route-helpers.ts";
import type { HttpApp } from "../../http/server.ts";

/**
 * The /store API (long-term memory), as the vendor's agent server and its SDKs
 * speak it. HTTP only: parsing, the namespace rules with the field that broke
 * them, and item records in wire form; the store does the rest.
 */
export function registerStoreRoutes(app: HttpApp, deps: { store: SlipwayStore }): void {
  const { store } = deps;
  const errors = errorResponses(422);

  app.put(
    "/store/items",
    {
      schema: {
        tags: ["Store"],
        summary: "Store or update an item.",
        operationId: "put_item",
        body: S.StorePutRequest,
        response: { 204: S.NoContent, ...errors },
      },
    },
    async (request, reply) => {
      const { namespace, key, value, index, ttl } = request.body;
      requireNamespace(namespace, ["body", "namespace"], { write: true });
      requireKey(key, ["body", "key"]);
      await refuseHiddenItem(store, request, namespace, key);
      await store.put(namespace, key, value, index ?? undefined, { ttl });
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/store/items",
    {
      schema: {
        tags: ["Store"],
        summary: "Retrieve a single item.",
        operationId: "get_item",
        querystring: S.StoreGetQuery,
        response: { 200: Type.Union([S.Item, Type.Null()]), ...errors },
      },
    },
    async (request) => {
      const { key, refresh_ttl } = request.query;
      // The SDKs send the labels dot-joined in one parameter (`namespace=a.b`); repeated
      // parameters (`namespace=a&namespace=b`) mean the same. An empty value is the root.
      const namespace = (request.query.namespace ?? []).flatMap((part) => (part === "" ? [] : part.split(SEPARATOR)));
      requireNamespace(namespace, ["query", "namespace"], { allowEmpty: true });
      requireKey(key, ["query", "key"]);
      const item = await store.get(namespace, key, { refreshTtl: refresh_ttl });
      // An item custom auth hides is answered as a missing one.
      if (item && !visible(request, item)) return null;
      // A missing item is `null`, as the vendor's servers answer and the SDKs expect
      // (their getItem returns null rather than raising).
      return item ? toWire(item) : null;
    },
  );

  app.delete(
    "/store/items",
    {
      schema: {
        tags: ["Store"],
        summary: "Delete an item.",
        operationId: "delete_item",
        body: S.StoreDeleteRequest,
        response: { 204: S.NoContent, ...errors },
      },
    },
    async (request, reply) => {
      const namespace = request.body.namespace ?? [];
      requireNamespace(namespace, ["body", "namespace"], { allowEmpty: true });
      requireKey(request.body.key, ["body", "key"]);
      await refuseHiddenItem(store, request, namespace, request.body.key);
      await store.delete(namespace, request.body.key);
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/store/items/search",
    {
      schema: {
        tags: ["Store"],
        summary: "Search or list items within a namespace prefix.",
        description: "Lists items by last update, newest first; with `query` (store.index of langgraph.json), by similarity.",
        operationId: "search_items",
        body: S.StoreSearchRequest,
        response: { 200: S.SearchItemsResponse, ...errors },
      },
    },
    async (request) => {
      const { filter, limit, offset, query, refresh_ttl } = request.body;
      const prefix = request.body.namespace_prefix ?? [];
      requireNamespace(prefix, ["body", "namespace_prefix"], { allowEmpty: true });
      const options = {
        filter: filter ?? undefined,
        limit,
        offset,
        query: query ?? undefined,
        refreshTtl: refresh_ttl ?? undefined,
        authFilter: requestFilters(request),
      };
      const items = await store.search(prefix, options);
      return { items: items.map(toWire) };
    },
  );

  app.post(
    "/store/namespaces",
    {
      schema: {
        tags: ["Store"],
        summary: "List namespaces with optional match conditions.",
        operationId: "list_namespaces",
        body: S.StoreListNamespacesRequest,
        response: { 200: S.ListNamespaceResponse, ...errors },
      },
    },
    async (request) => {
      const { prefix, suffix, max_depth, limit, offset } = request.body;
      if (prefix) requireNamespace(prefix, ["body", "prefix"], { allowEmpty: true });
      if (suffix) requireNamespace(suffix, ["body", "suffix"], { allowEmpty: true });
      return { namespaces: await store.listNamespaces({ prefix, suffix, maxDepth: max_depth, limit, offset, authFilter: requestFilters(request) }) };
    },
  );
}

function requireNamespace(namespace: string[], loc: string[], options: { allowEmpty?: boolean; write?: boolean }): void {
  const problem = namespaceProblem(namespace, options);
  if (problem) throw invalidField(loc, problem);
}

/** Every request that names an item bounds its key the same way, reads included. */
function requireKey(key: string, loc: string[]): void {
  const problem = keyProblem(key);
  if (problem) throw invalidField(loc, problem);
}

function toWire(item: Item & { score?: number }): S.WireItem & { score?: number } {
  return {
    namespace: item.namespace,
    key: item.key,
    value: item.value,
    created_at: item.createdAt.toISOString(),
    updated_at: item.updatedAt.toISOString(),
    // Semantic search only: the similarity to the query.
    ...(typeof item.score === "number" ? { score: item.score } : {}),
  };
}

/** Whether custom auth's filters (if any) let the caller see an item. */
function visible(request: FastifyRequest, item: { namespace: string[]; key: string; value: Record<string, unknown> }): boolean {
  const filters = requestFilters(request);
  return !filters || matches({ ...item.value, namespace: item.namespace, key: item.key }, filters);
}

/** Overwriting or deleting an item the caller may not see: 404, as if it did not exist. */
async function refuseHiddenItem(store: SlipwayStore, request: FastifyRequest, namespace: string[], key: string): Promise<void> {
  if (!requestFilters(request)) return;
  const existing = await store.get(namespace, key, { refreshTtl: false });
  if (existing && !visible(request, existing)) throw notFound("Item not found");
}
