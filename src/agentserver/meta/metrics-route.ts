import type { HttpApp } from "../../http/server.ts";
import type { Database } from "../../storage/database.ts";
import type { RunLifecycle } from "../runs/lifecycle.ts";
import { queueStats, type QueueStats } from "../runs/queue-stats.ts";
import { histogramLines, labels, METRICS_QUERY, METRICS_RESPONSE, PROMETHEUS_TEXT, type Histogram } from "../../http/prometheus.ts";
import { ServerMetrics } from "./metrics.ts";

interface MetricsDeps {
  db: Database;
  lifecycle: RunLifecycle;
  workers(): { max: number; active: number; available: number };
  streamReaders(): number;
  /** The vendor's `project_id` and `revision_id` labels: the deployment and its revision, when the control plane runs this server. */
  labels: { project_id: string; revision_id: string };
}

/**
 * `GET /metrics`, as the vendor's agent server serves it: Prometheus text by default,
 * JSON with `format=json`. It needs the API key like every route but the open ones
 * (custom auth: any authenticated user).
 */
export function registerMetricsRoute(app: HttpApp, deps: MetricsDeps): void {
  const metrics = new ServerMetrics();
  app.addHook("onResponse", async (request, reply) => {
    metrics.recordRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
  });
  deps.lifecycle.on("claimed", ({ run }) => metrics.runClaimed(run.run_id, run.attempt, run.available_at));
  deps.lifecycle.on("ended", ({ run, result }) => metrics.runEnded(run.run_id, result?.status ?? run.status));
  deps.lifecycle.on("handedBack", ({ run }) => metrics.runHandedBack(run.run_id));

  app.get(
    "/metrics",
    {
      schema: {
        tags: ["System"],
        summary: "System Metrics",
        description: "Queue, workers, HTTP requests, runs, stream readers and the database pool, in Prometheus text or JSON.",
        querystring: METRICS_QUERY,
        response: METRICS_RESPONSE,
      },
    },
    async (request, reply) => {
      const snapshot = {
        queue: await queueStats(deps.db),
        workers: deps.workers(),
        streamReaders: deps.streamReaders(),
        pool: deps.db.poolStats?.(),
      };
      if (request.query.format === "json") return reply.send(asJson(metrics, snapshot));
      return reply.type(PROMETHEUS_TEXT).send(asPrometheus(metrics, snapshot, deps.labels));
    },
  );
}

interface Snapshot {
  queue: QueueStats;
  workers: { max: number; active: number; available: number };
  streamReaders: number;
  pool: { max: number; size: number; available: number; waiting: number } | undefined;
}

function asJson(metrics: ServerMetrics, snapshot: Snapshot) {
  return {
    queue: snapshot.queue,
    workers: snapshot.workers,
    api: { http_requests_total: [...metrics.requests.values()] },
    ...(snapshot.pool
      ? {
          postgres: {
            pool_max: snapshot.pool.max,
            pool_size: snapshot.pool.size,
            pool_available: snapshot.pool.available,
            requests_waiting: snapshot.pool.waiting,
          },
        }
      : {}),
    slipway: {
      stream_readers: snapshot.streamReaders,
      run_queue_wait_seconds: histogramJson(metrics.queueWait),
      run_duration_seconds: Object.fromEntries([...metrics.runDurations].map(([status, histogram]) => [status, histogramJson(histogram)])),
    },
  };
}

function histogramJson(histogram: Histogram) {
  return { count: histogram.count, sum: histogram.sum };
}

function asPrometheus(metrics: ServerMetrics, snapshot: Snapshot, base: MetricsDeps["labels"]): string {
  const out: string[] = [];
  const gauge = (name: string, help: string, value: number) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}${labels(base)} ${value}`);
  };
  gauge("lg_api_num_pending_runs", "The number of runs currently pending.", snapshot.queue.n_pending);
  gauge("lg_api_num_running_runs", "The number of runs currently running.", snapshot.queue.n_running);
  gauge("lg_api_pending_runs_wait_time_max", "The longest time a pending run has waited, in seconds.", snapshot.queue.pending_runs_wait_time_max_secs);
  gauge("lg_api_pending_runs_wait_time_med", "The median time pending runs have waited, in seconds.", snapshot.queue.pending_runs_wait_time_med_secs);
  gauge(
    "lg_api_pending_unblocked_runs_wait_time_max",
    "The longest time a pending run whose thread runs nothing has waited, in seconds.",
    snapshot.queue.pending_unblocked_runs_wait_time_max_secs,
  );
  gauge("lg_api_workers_max", "The most runs this process executes at once.", snapshot.workers.max);
  gauge("lg_api_workers_active", "Runs this process executes now.", snapshot.workers.active);
  gauge("lg_api_workers_available", "Runs this process could take on now.", snapshot.workers.available);
  if (metrics.requests.size) {
    out.push("# HELP lg_api_http_requests_total Total number of HTTP requests.", "# TYPE lg_api_http_requests_total counter");
    for (const { method, path, status, count } of metrics.requests.values()) {
      out.push(`lg_api_http_requests_total${labels({ ...base, method, path, status: String(status) })} ${count}`);
    }
  }
  if (metrics.latency.size) {
    out.push("# HELP lg_api_http_requests_latency_seconds HTTP request latency in seconds.", "# TYPE lg_api_http_requests_latency_seconds histogram");
    for (const { method, path, histogram } of metrics.latency.values())
      histogramLines(out, "lg_api_http_requests_latency_seconds", { ...base, method, path }, histogram);
  }
  if (snapshot.pool) {
    gauge("lg_api_pg_pool_max", "The maximum size of the postgres connection pool.", snapshot.pool.max);
    gauge("lg_api_pg_pool_size", "Connections the postgres pool holds, idle or in use.", snapshot.pool.size);
    gauge("lg_api_pg_pool_available", "Idle connections of the postgres pool.", snapshot.pool.available);
    gauge("lg_api_pg_pool_requests_waiting", "Requests waiting for a postgres connection.", snapshot.pool.waiting);
  }
  gauge("slipway_stream_readers", "Open readers of run and thread streams.", snapshot.streamReaders);
  out.push(
    "# HELP slipway_run_queue_wait_seconds Time from a run becoming claimable to its first attempt here.",
    "# TYPE slipway_run_queue_wait_seconds histogram",
  );
  histogramLines(out, "slipway_run_queue_wait_seconds", base, metrics.queueWait);
  if (metrics.runDurations.size) {
    out.push("# HELP slipway_run_duration_seconds Time runs executed here, by final status.", "# TYPE slipway_run_duration_seconds histogram");
    for (const [status, histogram] of metrics.runDurations) histogramLines(out, "slipway_run_duration_seconds", { ...base, status }, histogram);
  }
  return `${out.join("\n")}\n`;
}
