import type { FastifyReply, FastifyRequest } from "fastify";
import { SseWriter } from "../../http/sse.ts";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { errorResponses, pageOf } from "../deployments/wire.ts";
import type { LogType } from "./lines.ts";
import { LogsPage, LogsQueryBody, ProjectParams, ProjectRevisionParams, RevisionLogsQuery } from "./schemas.ts";

const tags = ["Deployments (v2)"];

/**
 * Build and deploy logs of revisions: the vendor's v1 POST endpoints (a body of filters,
 * `{logs, next_offset}` back) and the newer GET per revision, which with `follow=true`
 * streams the log as server-sent events while the revision builds or runs.
 */
export const registerLogRoutes: RegisterRoutes = (app, { logs }) => {
  const v1 = (url: string, type: LogType, operationId: string, summary: string, perRevision: boolean) =>
    app.post(
      url,
      {
        schema: {
          tags,
          summary,
          operationId,
          params: perRevision ? ProjectRevisionParams : ProjectParams,
          body: LogsQueryBody,
          response: { 200: LogsPage, ...errorResponses(401, 404, 422) },
        },
      },
      async (request) => {
        const params: { deployment_id: string; revision_id?: string } = request.params;
        const body = request.body ?? {};
        return logs.read(requireTenant(request).workspaceId, params.deployment_id, {
          type,
          revisionId: params.revision_id,
          ...pageOf(body),
          order: body.order ?? "asc",
          level: body.level,
          query: body.query,
          startTime: body.start_time,
          endTime: body.end_time,
        });
      },
    );
  v1(
    "/v1/projects/:deployment_id/revisions/:revision_id/build_logs",
    "build",
    "get_build_logs_v1_projects__deployment_id__revisions__revision_id__build_logs_post",
    "Get Revision Build Logs",
    true,
  );
  v1(
    "/v1/projects/:deployment_id/revisions/:revision_id/deploy_logs",
    "deploy",
    "get_revision_deploy_logs_v1_projects__deployment_id__revisions__revision_id__deploy_logs_post",
    "Get Revision Deploy Logs",
    true,
  );
  v1("/v1/projects/:deployment_id/deploy_logs", "deploy", "get_deploy_logs_v1_projects__deployment_id__deploy_logs_post", "Get Deployment Deploy Logs", false);

  app.get(
    "/v2/deployments/:deployment_id/revisions/:revision_id/logs",
    {
      schema: {
        tags,
        summary: "Get Revision Logs",
        operationId: "get_revision_logs_v2_deployments__deployment_id__revisions__revision_id__logs_get",
        description: "A page of the revision's build or deploy log; with follow=true, a text/event-stream of it while it grows.",
        params: ProjectRevisionParams,
        querystring: RevisionLogsQuery,
        response: { 200: LogsPage, ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      const params = request.params;
      const query = request.query;
      const workspaceId = requireTenant(request).workspaceId;
      const type = query.type ?? "build";
      if (!query.follow) {
        return logs.read(workspaceId, params.deployment_id, {
          type,
          revisionId: params.revision_id,
          ...pageOf(query),
          order: query.order ?? "asc",
          level: query.level,
        });
      }
      await logs.mustExist(workspaceId, params.deployment_id, params.revision_id);
      return streamLog(request, reply, (send, signal) =>
        logs.follow({ workspaceId, deploymentId: params.deployment_id, revisionId: params.revision_id, type, afterSeq: lastEventId(request) }, send, signal),
      );
    },
  );
};

/**
 * Server-sent events: one `log` event per line (its id is the line's), heartbeats, then
 * `end`. Each line waits until the socket takes more, so a slow reader slows the follow
 * loop instead of piling the log up in memory.
 */
async function streamLog(
  request: FastifyRequest,
  reply: FastifyReply,
  follow: (send: (entry: { id: string }) => Promise<void>, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const sse = new SseWriter(request, reply, { heartbeatMs: 15_000 });
  try {
    await follow((entry) => sse.send("log", entry, entry.id), sse.signal);
    await sse.send("end", null);
  } catch (error) {
    await sse.send("error", { detail: (error as Error).message });
  } finally {
    sse.end();
  }
}

function lastEventId(request: FastifyRequest): number | undefined {
  const raw = request.headers["last-event-id"];
  const value = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
