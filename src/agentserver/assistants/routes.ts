import type { FastifyRequest } from "fastify";
import { invalidField } from "../../http/errors.ts";
import type { AssistantService } from "./service.ts";
import * as S from "./schemas.ts";
import { errorResponses, setPaginationHeaders } from "../route-helpers.ts";
import type { HttpApp } from "../../http/server.ts";

/**
 * The /assistants API as the vendor's agent server and its SDKs speak it. HTTP only:
 * parsing, status codes and pagination headers; the service holds the rules. Every
 * `{assistant_id}` also accepts a graph id, meaning that graph's system assistant.
 */
export interface AssistantRouteDeps {
  assistants: AssistantService;
  /** For DELETE ?delete_threads=true: the threads domain deletes an assistant's threads. */
  deleteThreadsOf?: (assistantId: string) => Promise<unknown>;
}

export function registerAssistantRoutes(app: HttpApp, deps: AssistantRouteDeps): void {
  const { assistants } = deps;
  const tags = ["Assistants"];
  const errors = errorResponses(404, 422);
  // Search, count, versions and latest have nothing required in their body: a bare POST means "{}".
  const emptyBodyIsObject = async (request: FastifyRequest) => {
    if (request.body === undefined || request.body === null) request.body = {};
  };

  app.post(
    "/assistants",
    {
      schema: {
        tags,
        summary: "Create Assistant",
        description: "Create an assistant at version 1. `if_exists` decides what an existing `assistant_id` means.",
        operationId: "create_assistant_assistants_post",
        body: S.AssistantCreate,
        response: { 200: S.Assistant, 409: S.ErrorResponse, ...errors },
      },
    },
    async (request) => assistants.create(request.body),
  );

  // `select` projects rows to some fields, which the vendor's list schema requires: the
  // reply is typed as what it is, a projection, and written without that schema.
  app.post<{ Body: S.AssistantSearchRequest; Reply: Array<Partial<S.Assistant>> }>(
    "/assistants/search",
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: "Search Assistants",
        description:
          "Search for assistants; also the way to list them. Sets X-Pagination-Total and, when more follow, X-Pagination-Next, as the vendor's server does.",
        operationId: "search_assistants_assistants_search_post",
        body: S.AssistantSearchRequest,
        response: { 200: S.AssistantList, ...errors },
      },
    },
    async (request, reply) => {
      const page = await assistants.search(request.body);
      setPaginationHeaders(reply, { offset: request.body.offset ?? 0, count: page.assistants.length, next: page.next });
      // `select` leaves out fields the list schema requires; write those pages as they are.
      if (request.body.select?.length) reply.serializer(JSON.stringify);
      return page.assistants;
    },
  );

  app.post(
    "/assistants/count",
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: "Count Assistants",
        description: "Get the count of assistants matching the specified criteria.",
        operationId: "count_assistants_assistants_count_post",
        body: S.AssistantCountRequest,
        response: { 200: S.Count, ...errors },
      },
    },
    async (request) => assistants.count(request.body),
  );

  app.get(
    "/assistants/:assistant_id",
    {
      schema: {
        tags,
        summary: "Get Assistant",
        operationId: "get_assistant_assistants__assistant_id__get",
        params: S.AssistantIdParams,
        response: { 200: S.Assistant, ...errors },
      },
    },
    async (request) => assistants.get(request.params.assistant_id),
  );

  app.patch(
    "/assistants/:assistant_id",
    {
      schema: {
        tags,
        summary: "Patch Assistant",
        description: "Update an assistant: a new version is made and becomes current. Metadata merges; other fields replace.",
        operationId: "patch_assistant_assistants__assistant_id__patch",
        params: S.AssistantIdParams,
        body: S.AssistantPatch,
        response: { 200: S.Assistant, ...errors },
      },
    },
    async (request) => assistants.patch(request.params.assistant_id, request.body),
  );

  app.delete(
    "/assistants/:assistant_id",
    {
      schema: {
        tags,
        summary: "Delete Assistant",
        description: "Delete an assistant and all its versions.",
        operationId: "delete_assistant_assistants__assistant_id__delete",
        params: S.AssistantIdParams,
        querystring: S.DeleteQuery,
        response: { 200: S.Anything, ...errors },
      },
    },
    async (request) => {
      await assistants.delete(request.params.assistant_id, { deleteThreads: request.query.delete_threads, deleteThreadsOf: deps.deleteThreadsOf });
      return {};
    },
  );

  app.get(
    "/assistants/:assistant_id/graph",
    {
      schema: {
        tags,
        summary: "Get Assistant Graph",
        description: "The drawing of the assistant's graph as {nodes, edges}.",
        operationId: "get_assistant_graph_assistants__assistant_id__graph_get",
        params: S.AssistantIdParams,
        querystring: S.XrayQuery,
        response: { 200: S.DrawableGraph, ...errors },
      },
    },
    async (request) => assistants.drawGraph(request.params.assistant_id, request.query.xray ?? false),
  );

  app.get(
    "/assistants/:assistant_id/schemas",
    {
      schema: {
        tags,
        summary: "Get Assistant Schemas",
        description: "JSON Schemas of the graph's input, output, state and config/context (see graph-info.ts for how they are derived).",
        operationId: "get_assistant_schemas_assistants__assistant_id__schemas_get",
        params: S.AssistantIdParams,
        response: { 200: S.GraphSchema, ...errors },
      },
    },
    async (request) => assistants.schemas(request.params.assistant_id),
  );

  app.get(
    "/assistants/:assistant_id/subgraphs",
    {
      schema: {
        tags,
        summary: "Get Assistant Subgraphs",
        operationId: "get_assistant_subgraphs_assistants__assistant_id__subgraphs_get",
        params: S.AssistantIdParams,
        querystring: S.RecurseQuery,
        response: { 200: S.Subgraphs, ...errors },
      },
    },
    async (request) => assistants.subgraphs(request.params.assistant_id, undefined, request.query.recurse ?? false),
  );

  app.get(
    "/assistants/:assistant_id/subgraphs/:namespace",
    {
      schema: {
        tags,
        summary: "Get Assistant Subgraphs by Namespace",
        description: "The subgraph at `namespace` (`a|b` for nested ones); an empty map when there is none.",
        operationId: "get_assistant_subgraphs_assistants__assistant_id__subgraphs__namespace__get",
        params: S.NamespaceParams,
        querystring: S.RecurseQuery,
        response: { 200: S.Subgraphs, ...errors },
      },
    },
    async (request) => assistants.subgraphs(request.params.assistant_id, request.params.namespace, request.query.recurse ?? false),
  );

  app.post(
    "/assistants/:assistant_id/versions",
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: "Get Assistant Versions",
        description: "All versions of an assistant, newest first.",
        operationId: "get_assistant_versions_assistants__assistant_id__versions_get",
        params: S.AssistantIdParams,
        body: S.AssistantVersionsSearchRequest,
        response: { 200: S.AssistantList, ...errors },
      },
    },
    async (request) => assistants.versions(request.params.assistant_id, request.body),
  );

  app.post(
    "/assistants/:assistant_id/latest",
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: "Set Latest Assistant Version",
        description: "Make `version` the current one. The SDKs send it in the body; the query parameter is accepted too.",
        operationId: "set_latest_assistant_version_assistants__assistant_id__versions_post",
        params: S.AssistantIdParams,
        querystring: S.VersionQuery,
        body: S.AssistantVersionChange,
        response: { 200: S.Assistant, ...errors },
      },
    },
    async (request) => {
      const version = request.body.version ?? request.query.version;
      if (version === undefined) throw invalidField(["body", "version"], "Field required", "missing");
      return assistants.setLatest(request.params.assistant_id, version);
    },
  );
}
