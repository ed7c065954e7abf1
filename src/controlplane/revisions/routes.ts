import { requireTenant, type RegisterRoutes } from "../context.ts";
import { Deployment, DeploymentIdParams } from "../deployments/schemas.ts";
import { invalidField } from "../../http/errors.ts";
import { errorResponses, pageOf } from "../deployments/wire.ts";
import { Revision, RevisionListQuery, RevisionParams, RevisionsList } from "./schemas.ts";
import { REVISION_STATUSES, type RevisionStatus } from "./state-machine.ts";

const tags = ["Deployments (v2)"];

/** /v2/deployments/{deployment_id}/revisions: HTTP only; the rules are in service.ts and state-machine.ts. */
export const registerRevisionRoutes: RegisterRoutes = (app, { revisions, deployments }) => {
  app.get(
    "/v2/deployments/:deployment_id/revisions",
    {
      schema: {
        tags,
        summary: "List Revisions",
        operationId: "list_revisions_v2_deployments__deployment_id__revisions_get",
        description: "Revisions of the deployment, latest first.",
        params: DeploymentIdParams,
        querystring: RevisionListQuery,
        response: { 200: RevisionsList, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const query = request.query;
      const { deployment_id } = request.params;
      return revisions.list(requireTenant(request).workspaceId, deployment_id, {
        statuses: query.status === undefined ? undefined : statusList(query.status),
        remote: query.remote_reconciled,
        ...pageOf(query),
      });
    },
  );

  app.get(
    "/v2/deployments/:deployment_id/revisions/:revision_id",
    {
      schema: {
        tags,
        summary: "Get Revision",
        operationId: "get_revision_v2_deployments__deployment_id__revisions__revision_id__get",
        params: RevisionParams,
        response: { 200: Revision, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { deployment_id, revision_id } = request.params;
      return revisions.get(requireTenant(request).workspaceId, deployment_id, revision_id);
    },
  );

  app.post(
    "/v2/deployments/:deployment_id/revisions/:revision_id/redeploy",
    {
      schema: {
        tags,
        summary: "Redeploy Revision",
        operationId: "redeploy_revision_v2_deployments__deployment_id__revisions__revision_id__redeploy_post",
        description: "Makes a new revision from this one's snapshot (commit, configuration, resources, secrets) and returns the deployment.",
        params: RevisionParams,
        response: { 200: Deployment, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => {
      const { deployment_id, revision_id } = request.params;
      const workspaceId = requireTenant(request).workspaceId;
      await revisions.redeploy(workspaceId, deployment_id, revision_id);
      return deployments.get(workspaceId, deployment_id);
    },
  );

  app.post(
    "/v2/deployments/:deployment_id/rotate-credentials",
    {
      schema: {
        tags,
        summary: "Rotate Deployment Credentials",
        operationId: "rotate_credentials_v2_deployments__deployment_id__rotate_credentials_post",
        description:
          "Gives the deployment's processes a new database credential: a revision made from the active one (its build, no install) " +
          "starts with it and takes the traffic as a deploy does; the replaced credential stops working once the replaced processes have stopped. " +
          "409 when the deployment has none (embedded databases, image sources, nothing deployed). (Slipway addition; not in the vendor's API.)",
        params: DeploymentIdParams,
        response: { 200: Deployment, ...errorResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const { deployment_id } = request.params;
      const workspaceId = requireTenant(request).workspaceId;
      await revisions.rotateCredentials(workspaceId, deployment_id);
      return deployments.get(workspaceId, deployment_id);
    },
  );

  app.post(
    "/v2/deployments/:deployment_id/revisions/:revision_id/interrupt",
    {
      schema: {
        tags,
        summary: "Interrupt Revision",
        operationId: "interrupt_revision_v2_deployments__deployment_id__revisions__revision_id__interrupt_post",
        description:
          "Stops a queued or in-flight revision (status INTERRUPTED); the revision waiting behind it starts. " +
          "409 when the revision has already settled. (Slipway addition; not in the vendor's API.)",
        params: RevisionParams,
        response: { 200: Revision, ...errorResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const { deployment_id, revision_id } = request.params;
      return revisions.interrupt(requireTenant(request).workspaceId, deployment_id, revision_id);
    },
  );
};

/** The vendor's comma separated `status` filter; an unknown status is a 422, not an empty page. */
function statusList(text: string): RevisionStatus[] {
  const statuses = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = statuses.find((s) => !(REVISION_STATUSES as readonly string[]).includes(s));
  if (bad !== undefined) {
    throw invalidField(["query", "status"], `Input should be a comma separated list of ${REVISION_STATUSES.join(", ")}; '${bad}' is not one`, "enum");
  }
  return statuses as RevisionStatus[];
}
