import { Histogram, openApiPath } from "../../http/prometheus.ts";

/**
 * What `/metrics` reports that only this process knows: HTTP requests by route and
 * status with their latency, and the runs this process executed (their durations and
 * how long they waited in the queue). The vendor's names and buckets; ours are
 * `slipway_`-prefixed. Bounded like the vendor's: past the caps, new series are dropped.
 */
const MAX_REQUEST_SERIES = 5000;
const MAX_HISTOGRAM_SERIES = 1000;

/** Routes left out of the HTTP series, as on the vendor's server. */
const UNCOUNTED_ROUTES = new Set(["/ok", "/info", "/metrics", "/docs", "/openapi.json"]);

export class ServerMetrics {
  /** `method route status` → count. */
  readonly requests = new Map<string, { method: string; path: string; status: number; count: number }>();
  /** `method route` → latency. */
  readonly latency = new Map<string, { method: string; path: string; histogram: Histogram }>();
  /** Final status → how long the run executed here. */
  readonly runDurations = new Map<string, Histogram>();
  /** From queued to claimed by a worker here, first attempts only. */
  readonly queueWait = new Histogram();
  private readonly claimedAt = new Map<string, number>();

  /** `route` is Fastify's template (`/threads/:thread_id`); shown as the vendor's (`/threads/{thread_id}`). */
  recordRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    if (route === undefined || UNCOUNTED_ROUTES.has(route)) return;
    const path = openApiPath(route);
    const requestKey = `${method} ${path} ${status}`;
    const request = this.requests.get(requestKey);
    if (request) request.count++;
    else if (this.requests.size < MAX_REQUEST_SERIES) this.requests.set(requestKey, { method, path, status, count: 1 });
    const latencyKey = `${method} ${path}`;
    let series = this.latency.get(latencyKey);
    if (!series && this.latency.size < MAX_HISTOGRAM_SERIES) this.latency.set(latencyKey, (series = { method, path, histogram: new Histogram() }));
    series?.histogram.observe(seconds);
  }

  runClaimed(runId: string, attempt: number, queuedAt: Date, now = Date.now()): void {
    this.claimedAt.set(runId, now);
    if (attempt <= 1) this.queueWait.observe(Math.max(0, (now - queuedAt.getTime()) / 1000));
  }

  runEnded(runId: string, status: string, now = Date.now()): void {
    const claimed = this.claimedAt.get(runId);
    if (claimed === undefined) return;
    this.claimedAt.delete(runId);
    let histogram = this.runDurations.get(status);
    if (!histogram) this.runDurations.set(status, (histogram = new Histogram()));
    histogram.observe((now - claimed) / 1000);
  }

  /** An attempt that let go of its run: its duration is not a run's. */
  runHandedBack(runId: string): void {
    this.claimedAt.delete(runId);
  }
}
