import { Readable } from "node:stream";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { DeploymentIdParams } from "../deployments/schemas.ts";
import { errorResponses } from "../deployments/wire.ts";
import { UploadParams, UploadQuery, UploadReceived, UploadUrl } from "./schemas.ts";

const tags = ["Deployments (v2)"];

/** Uploaded sources: POST .../upload-url, then PUT the tarball to the URL it answers. */
export const registerUploadRoutes: RegisterRoutes = (app, { uploads }) => {
  app.post(
    "/v2/deployments/:deployment_id/upload-url",
    {
      schema: {
        tags,
        summary: "Create Upload URL",
        operationId: "create_upload_url_v2_deployments__deployment_id__upload_url_post",
        description:
          "A URL to PUT the project's source to, as a .tar.gz (at most 200 MB; regular files and folders only), for an " +
          "internal_source deployment. Then PATCH the deployment with source_revision_config.source_tarball_path = object_path.",
        params: DeploymentIdParams,
        response: { 200: UploadUrl, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => uploads.createUrl(requireTenant(request).workspaceId, request.params.deployment_id),
  );

  // The PUT takes the archive whatever type it declares (curl --data-binary sends
  // application/x-www-form-urlencoded): the body reaches the handler as a stream, and the
  // archive reader says what is wrong with it. Its own scope, so no other route parses so.
  void app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    scope.put(
      "/v2/deployments/:deployment_id/uploads/:upload_id",
      {
        config: { public: true },
        bodyLimit: 200 * 1024 * 1024,
        schema: {
          tags,
          summary: "Upload Source",
          operationId: "upload_source_v2_deployments__deployment_id__uploads__upload_id__put",
          description: "The URL create_upload_url answered. Authenticated by its signature; no API key needed.",
          params: UploadParams,
          querystring: UploadQuery,
          response: {
            200: UploadReceived,
            ...errorResponses(401, 404, 409, 413, 422),
          },
        },
      },
      async (request) => {
        const params = request.params;
        const query = request.query;
        const body = request.body instanceof Readable ? request.body : request.raw;
        return uploads.receive({ deploymentId: params.deployment_id, uploadId: params.upload_id, expires: query.expires, signature: query.signature }, body);
      },
    );
  });
};
