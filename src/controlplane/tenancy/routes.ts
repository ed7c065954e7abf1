import { Type } from "@sinclair/typebox";
import type { RegisterRoutes } from "../context.ts";
import { errorResponses } from "../deployments/wire.ts";
import { ApiKeyCreated, ApiKeyCreateRequest, ApiKeyIdParams, ApiKeyList, WorkspaceList } from "./schemas.ts";

/**
 * Slipway's own paths (the vendor has these on its platform API, not its control plane),
 * served while `up` holds the database, where `slipway admin` cannot:
 * - the workspaces a credential reaches, so that a client holding an organization key
 *   (which needs X-Tenant-Id on every other call) can offer a choice (the console's sign-in);
 * - the API keys of the caller's organization (or, for a workspace key, its workspace):
 *   list, create (the secret is answered once), revoke.
 * None reads X-Tenant-Id: they are about the credential, not one workspace's resources.
 */
export const registerTenancyRoutes: RegisterRoutes = (app, { tenancy }) => {
  const tags = ["Workspaces and API keys (Slipway)"];
  const config = { anyWorkspace: true };

  app.get(
    "/v2/workspaces",
    {
      config,
      schema: {
        tags,
        summary: "List Workspaces",
        operationId: "list_workspaces_v2_workspaces_get",
        description: "The workspaces the API key or token may use. X-Tenant-Id is not needed (nor read).",
        response: { 200: WorkspaceList, ...errorResponses(401) },
      },
    },
    async (request) => {
      const caller = request.caller!;
      const resources = await tenancy.workspacesOf(caller);
      return {
        resources,
        organization_id: caller.organizationId,
        scope: caller.workspaceId === null ? ("organization" as const) : ("workspace" as const),
        offset: null,
      };
    },
  );

  app.get(
    "/v2/api-keys",
    {
      config,
      schema: {
        tags,
        summary: "List API Keys",
        operationId: "list_api_keys_v2_api_keys_get",
        description: "The organization's keys (a workspace key: its workspace's), revoked ones included. Secrets are never returned.",
        response: { 200: ApiKeyList, ...errorResponses(401) },
      },
    },
    async (request) => ({ resources: await tenancy.apiKeysOf(request.caller!), offset: null }),
  );

  app.post(
    "/v2/api-keys",
    {
      config,
      schema: {
        tags,
        summary: "Create API Key",
        operationId: "create_api_key_v2_api_keys_post",
        description: "A new key, answered in full once. A workspace key may only make keys of its own workspace (403 otherwise).",
        body: ApiKeyCreateRequest,
        response: { 201: ApiKeyCreated, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await tenancy.createApiKeyFor(request.caller!, request.body ?? {})),
  );

  app.delete(
    "/v2/api-keys/:api_key_id",
    {
      config,
      schema: {
        tags,
        summary: "Revoke API Key",
        operationId: "revoke_api_key_v2_api_keys__api_key_id__delete",
        description: "Revokes the key: requests with it are refused within seconds (the router caches keys for 5 s).",
        params: ApiKeyIdParams,
        response: { 204: Type.Null({ description: "Revoked." }), ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      await tenancy.revokeApiKeyFor(request.caller!, request.params.api_key_id);
      return reply.status(204).send(null);
    },
  );
};
