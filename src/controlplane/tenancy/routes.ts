import type { RegisterRoutes } from "../context.ts";
import { errorResponses } from "../deployments/wire.ts";
import { WorkspaceList } from "./schemas.ts";

/**
 * The workspaces a credential reaches, so that a client holding an organization key (which
 * needs X-Tenant-Id on every other call) can offer a choice: the web console's sign-in.
 * Slipway's own path; the vendor lists workspaces on its platform API instead.
 */
export const registerTenancyRoutes: RegisterRoutes = (app, { tenancy }) => {
  app.get(
    "/v2/workspaces",
    {
      config: { anyWorkspace: true },
      schema: {
        tags: ["Workspaces (Slipway)"],
        summary: "List Workspaces",
        operationId: "list_workspaces_v2_workspaces_get",
        description: "The workspaces the API key or token may use. X-Tenant-Id is not needed (nor read).",
        response: { 200: WorkspaceList, ...errorResponses(401) },
      },
    },
    async (request) => {
      const caller = request.caller!;
      const resources = await tenancy.workspacesOf(caller);
      return { resources, organization_id: caller.organizationId, scope: caller.workspaceId === null ? "organization" as const : "workspace" as const, offset: null };
    },
  );
};
