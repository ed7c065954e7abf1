import { describeMetric, histogramLines, labels, METRICS_QUERY, METRICS_RESPONSE, PROMETHEUS_TEXT } from "../../http/prometheus.ts";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import type { WorkspaceMetrics } from "./service.ts";

/**
 * `GET /metrics` of the control plane (a Slipway addition: the vendor's control plane has
 * none): the caller's workspace only, in Prometheus text or JSON with `format=json`, like
 * the agent server's. Its API requests are counted by the scope's onResponse hook (app.ts).
 */
export const registerMetricsRoutes: RegisterRoutes = (app, { metrics }) => {
  app.get(
    "/metrics",
    {
      schema: {
        tags: ["Slipway"],
        summary: "Control-plane metrics of the workspace",
        description:
          "Deployments and revisions by status, build durations, the control plane's API requests and the requests the router passed to " +
          "the workspace's deployments, in Prometheus text (default) or JSON. Counters are this process's since its start; the rest is read from the database.",
        querystring: METRICS_QUERY,
        response: METRICS_RESPONSE,
      },
    },
    async (request, reply) => {
      const { workspaceId } = requireTenant(request);
      const snapshot = await metrics.forWorkspace(workspaceId);
      if (request.query.format === "json") return reply.send(asJson(snapshot));
      return reply.type(PROMETHEUS_TEXT).send(asPrometheus(snapshot, { workspace_id: workspaceId }));
    },
  );
};

function asJson(snapshot: WorkspaceMetrics) {
  const requests = (series: WorkspaceMetrics["api"]) =>
    series.map(({ method, path, status, count, latency }) => ({ method, path, status, count, latency_seconds_sum: latency.sum }));
  return {
    deployments: Object.fromEntries(snapshot.deployments),
    revisions: Object.fromEntries(snapshot.revisions),
    builds: Object.fromEntries([...snapshot.builds].map(([outcome, histogram]) => [outcome, { count: histogram.count, sum: histogram.sum }])),
    api: { http_requests_total: requests(snapshot.api) },
    router: {
      requests_total: snapshot.router.map(({ deploymentId, method, status, count, latency }) => ({
        deployment_id: deploymentId,
        method,
        status,
        count,
        latency_seconds_sum: latency.sum,
      })),
    },
  };
}

function asPrometheus(snapshot: WorkspaceMetrics, base: Record<string, string>): string {
  const out: string[] = [];
  describeMetric(out, "slipway_deployments", "gauge", "Deployments of the workspace, by status.");
  for (const [status, n] of snapshot.deployments) out.push(`slipway_deployments${labels({ ...base, status })} ${n}`);
  describeMetric(out, "slipway_revisions", "gauge", "Revisions of the workspace, by status.");
  for (const [status, n] of snapshot.revisions) out.push(`slipway_revisions${labels({ ...base, status })} ${n}`);
  describeMetric(out, "slipway_build_duration_seconds", "histogram", "Durations of the workspace's recent builds (their last 500), by outcome.");
  for (const [outcome, histogram] of snapshot.builds) histogramLines(out, "slipway_build_duration_seconds", { ...base, outcome }, histogram);
  describeMetric(out, "slipway_cp_http_requests_total", "counter", "Requests to the control plane's API, by route and status.");
  for (const { method, path, status, count } of snapshot.api)
    out.push(`slipway_cp_http_requests_total${labels({ ...base, method, path, status: String(status) })} ${count}`);
  describeMetric(out, "slipway_cp_http_requests_latency_seconds", "histogram", "Latency of the control plane's API requests, by route and status.");
  for (const { method, path, status, latency } of snapshot.api)
    histogramLines(out, "slipway_cp_http_requests_latency_seconds", { ...base, method, path, status: String(status) }, latency);
  describeMetric(out, "slipway_router_requests_total", "counter", "Requests the router passed to the workspace's deployments, by deployment and status.");
  for (const { deploymentId, method, status, count } of snapshot.router)
    out.push(`slipway_router_requests_total${labels({ ...base, deployment_id: deploymentId, method, status: String(status) })} ${count}`);
  describeMetric(
    out,
    "slipway_router_requests_latency_seconds",
    "histogram",
    "Time from a routed request's arrival to its answer's end, by deployment and status.",
  );
  for (const { deploymentId, method, status, latency } of snapshot.router)
    histogramLines(out, "slipway_router_requests_latency_seconds", { ...base, deployment_id: deploymentId, method, status: String(status) }, latency);
  return `${out.join("\n")}\n`;
}
