import { Type } from "@sinclair/typebox";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { errorResponses, pageOf } from "../deployments/wire.ts";
import { Listener, ListenerCreateRequest, ListenerIdParams, ListenerListQuery, ListenerPatchRequest, ListenersList } from "./schemas.ts";

const tags = ["Listeners (v2)"];

/** /v2/listeners: HTTP only; the rules (plan, uniqueness, immutability) are in service.ts. */
export const registerListenerRoutes: RegisterRoutes = (app, { listeners }) => {
  app.get(
    "/v2/listeners",
    {
      schema: {
        tags,
        summary: "List Listeners",
        operationId: "list_listeners_v2_listeners_get",
        querystring: ListenerListQuery,
        response: { 200: ListenersList, ...errorResponses(401, 422) },
      },
    },
    async (request) => listeners.list(requireTenant(request), pageOf(request.query)),
  );

  app.post(
    "/v2/listeners",
    {
      schema: {
        tags,
        summary: "Create Listener",
        operationId: "create_listener_v2_listeners_post",
        description: "Only for organizations on a self-hosted enterprise plan. compute_id is unique in the workspace.",
        body: ListenerCreateRequest,
        response: { 201: Listener, ...errorResponses(401, 403, 409, 413, 422) },
      },
    },
    async (request, reply) => {
      const listener = await listeners.create(requireTenant(request), request.body);
      return reply.status(201).send(listener);
    },
  );

  app.get(
    "/v2/listeners/:listener_id",
    {
      schema: {
        tags,
        summary: "Get Listener",
        operationId: "get_listener_v2_listeners__listener_id__get",
        params: ListenerIdParams,
        response: { 200: Listener, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => listeners.get(requireTenant(request), request.params.listener_id),
  );

  app.patch(
    "/v2/listeners/:listener_id",
    {
      schema: {
        tags,
        summary: "Patch Listener",
        operationId: "patch_listener_v2_listeners__listener_id__patch",
        description: "Changes version and compute_config; compute_type and compute_id cannot change.",
        params: ListenerIdParams,
        body: ListenerPatchRequest,
        response: { 200: Listener, ...errorResponses(400, 401, 403, 404, 413, 422) },
      },
    },
    async (request) => listeners.patch(requireTenant(request), request.params.listener_id, request.body),
  );

  app.delete(
    "/v2/listeners/:listener_id",
    {
      schema: {
        tags,
        summary: "Delete Listener",
        operationId: "delete_listener_v2_listeners__listener_id__delete",
        params: ListenerIdParams,
        response: { 204: Type.Null({ description: "Deleted." }), ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await listeners.delete(requireTenant(request), request.params.listener_id);
      return reply.status(204).send(null);
    },
  );
};
