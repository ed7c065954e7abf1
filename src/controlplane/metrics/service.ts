import { Histogram, openApiPath } from "../../http/prometheus.ts";
import type { ControlPlaneDeps } from "../context.ts";
import { countByStatus, deploymentIds, recentBuildDurations } from "./repository.ts";

/** Past these, new series are dropped (a bound like the agent server's). */
const MAX_SERIES = 5000;

interface RequestSeries {
  method: string;
  path: string;
  status: number;
  count: number;
  latency: Histogram;
}

/** What one workspace sees of the control plane at `/metrics`. */
export interface WorkspaceMetrics {
  deployments: Map<string, number>;
  revisions: Map<string, number>;
  builds: Map<"built" | "failed", Histogram>;
  api: RequestSeries[];
  router: (RequestSeries & { deploymentId: string })[];
}

/**
 * The control plane's own counters: its API requests by workspace, route and status,
 * and the requests the router passed to deployments, by deployment and status. The rest
 * of `/metrics` (deployments and revisions by status, build durations) is read from the
 * database when asked, so it holds across restarts and nodes. Everything is per
 * workspace: one tenant's scrape shows nothing of another's.
 */
export class MetricsService {
  private readonly api = new Map<string, RequestSeries & { workspaceId: string }>();
  private readonly routed = new Map<string, RequestSeries & { deploymentId: string }>();

  constructor(private readonly deps: Pick<ControlPlaneDeps, "db">) {}

  /** `route` is Fastify's template (`/v2/deployments/:deployment_id`), shown in the OpenAPI spelling. */
  recordRequest(workspaceId: string | undefined, method: string, route: string | undefined, status: number, seconds: number): void {
    if (!workspaceId || route === undefined) return;
    const path = openApiPath(route);
    record(this.api, `${workspaceId} ${method} ${path} ${status}`, () => ({ workspaceId, method, path, status }), seconds);
  }

  /** A request the router handed to a deployment (`/deployments/<id>/...`). */
  recordRouted(url: string | undefined, method: string | undefined, status: number, seconds: number): void {
    const deploymentId = /^\/(?:api-host\/)?deployments\/([0-9a-f-]{36})(?:[/?]|$)/i.exec(url ?? "")?.[1]?.toLowerCase();
    if (!deploymentId || !method) return;
    record(this.routed, `${deploymentId} ${method} ${status}`, () => ({ deploymentId, method, path: "/deployments/{deployment_id}", status }), seconds);
  }

  async forWorkspace(workspaceId: string): Promise<WorkspaceMetrics> {
    const { db } = this.deps;
    const [deployments, revisions, durations, owned] = await Promise.all([
      countByStatus(db, "deployments", workspaceId),
      countByStatus(db, "revisions", workspaceId),
      recentBuildDurations(db, workspaceId),
      deploymentIds(db, workspaceId),
    ]);
    const builds = new Map<"built" | "failed", Histogram>();
    for (const { seconds, outcome } of durations) {
      let histogram = builds.get(outcome);
      if (!histogram) builds.set(outcome, (histogram = new Histogram()));
      histogram.observe(seconds);
    }
    return {
      deployments,
      revisions,
      builds,
      api: [...this.api.values()].filter((series) => series.workspaceId === workspaceId),
      router: [...this.routed.values()].filter((series) => owned.has(series.deploymentId)),
    };
  }
}

function record<T extends RequestSeries>(series: Map<string, T>, key: string, make: () => Omit<T, "count" | "latency">, seconds: number): void {
  let entry = series.get(key);
  if (!entry) {
    if (series.size >= MAX_SERIES) return;
    series.set(key, (entry = { ...make(), count: 0, latency: new Histogram() } as T));
  }
  entry.count++;
  entry.latency.observe(seconds);
}
