import { Type } from "@sinclair/typebox";
import { invalidField, notFound } from "../../http/errors.ts";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import {
  BulkDeleteQuery,
  BulkDeleteResult,
  Deployment,
  DeploymentCreateRequest,
  DeploymentIdParams,
  DeploymentListQuery,
  DeploymentPatchRequest,
  DeploymentsList,
} from "./schemas.ts";
import { errorResponses, isUuid, pageOf } from "./wire.ts";

const tags = ["Deployments (v2)"];

/** /v2/deployments: HTTP only; the rules are in service.ts and rules.ts. */
export const registerDeploymentRoutes: RegisterRoutes = (app, { deployments }) => {
  app.get(
    "/v2/deployments",
    {
      schema: {
        tags,
        summary: "List Deployments",
        operationId: "list_deployments_v2_deployments_get",
        querystring: DeploymentListQuery,
        response: { 200: DeploymentsList, ...errorResponses(401, 422) },
      },
    },
    async (request) => {
      const query = request.query;
      return deployments.list(requireTenant(request).workspaceId, {
        nameContains: query.name_contains,
        status: query.status,
        deploymentType: query.deployment_type,
        ids: query.deployment_ids === undefined ? undefined : uuidList(query.deployment_ids, "deployment_ids"),
        imageVersion: query.image_version,
        remote: query.remote_reconciled,
        tagValueIds: query.tag_value_ids?.split(",").filter(Boolean),
        ...pageOf(query),
      });
    },
  );

  app.post(
    "/v2/deployments",
    {
      schema: {
        tags,
        summary: "Create Deployment",
        operationId: "create_deployment_v2_deployments_post",
        description: "Creates the deployment and its first revision; the body's `id` and `latest_revision_id` name them.",
        body: DeploymentCreateRequest,
        response: { 201: Deployment, ...errorResponses(400, 401, 403, 409, 413, 422) },
      },
    },
    async (request, reply) => {
      const deployment = await deployments.create(requireTenant(request), request.body);
      return reply.status(201).send(deployment);
    },
  );

  app.delete(
    "/v2/deployments",
    {
      schema: {
        tags,
        summary: "Delete Deployments",
        operationId: "delete_deployments_v2_deployments_delete",
        description: "Deletes several deployments: 200 when all were deleted, 207 when only some were, 404 when none was found.",
        querystring: BulkDeleteQuery,
        response: { 200: BulkDeleteResult, 207: BulkDeleteResult, ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      const { deployment_ids } = request.query;
      const result = await deployments.deleteMany(requireTenant(request).workspaceId, deployment_ids);
      if (result.deleted_deployment_ids.length === 0) throw notFound(result.failed[0].detail);
      return reply.status(result.failed.length ? 207 : 200).send(result);
    },
  );

  app.get(
    "/v2/deployments/:deployment_id",
    {
      schema: {
        tags,
        summary: "Get Deployment",
        operationId: "get_deployment_v2_deployments__deployment_id__get",
        params: DeploymentIdParams,
        response: { 200: Deployment, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => deployments.get(requireTenant(request).workspaceId, request.params.deployment_id),
  );

  app.patch(
    "/v2/deployments/:deployment_id",
    {
      schema: {
        tags,
        summary: "Patch Deployment",
        operationId: "patch_deployment_v2_deployments__deployment_id__patch",
        description:
          "Creates a new revision when source_revision_config, secrets, secret_references or source_config.resource_spec is given; " +
          "other source_config settings (build_on_push, ...) change without one. Fields that cannot change are refused with 400.",
        params: DeploymentIdParams,
        body: DeploymentPatchRequest,
        response: { 200: Deployment, ...errorResponses(400, 401, 404, 413, 422) },
      },
    },
    async (request) => deployments.patch(requireTenant(request).workspaceId, request.params.deployment_id, request.body),
  );

  app.delete(
    "/v2/deployments/:deployment_id",
    {
      schema: {
        tags,
        summary: "Delete Deployment",
        operationId: "delete_deployment_v2_deployments__deployment_id__delete",
        params: DeploymentIdParams,
        querystring: Type.Object({
          delete_tracing_project: Type.Optional(
            Type.Boolean({ default: false, description: "Accepted for compatibility; Slipway keeps no tracing projects." }),
          ),
        }),
        response: { 204: Type.Null({ description: "Deleted." }), ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      await deployments.delete(requireTenant(request).workspaceId, request.params.deployment_id);
      return reply.status(204).send(null);
    },
  );
};

/** A comma separated list of uuids from the query string; a malformed one is a 422 naming the parameter. */
function uuidList(text: string, name: string): string[] {
  const ids = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = ids.find((id) => !isUuid(id));
  if (bad !== undefined) {
    throw invalidField(["query", name], `Input should be a comma separated list of UUIDs; '${bad}' is not one`, "uuid_parsing");
  }
  return ids;
}
