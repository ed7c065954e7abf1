import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { serverPerTest } from "../support/agent-server.ts";
import { parsePrometheusText } from "../support/prometheus-text.ts";

/**
 * GET /metrics (issue 29), as the vendor's agent server serves it: Prometheus text read
 * by Prometheus's own client library's parser, and JSON with format=json. The values move as runs are
 * queued, executed and finished.
 */
const API_KEY = "metrics-test-key";
const servers = serverPerTest();

async function scrape(url: string) {
  const response = await fetch(`${url}/metrics`, { headers: { "x-api-key": API_KEY } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  const families = parsePrometheusText(await response.text());
  const family = (name: string) => families.find((f) => f.name === name);
  const gauge = (name: string) => family(name)?.samples[0]?.value;
  /** The value of the sample `name` whose labels include `labels`. */
  const sample = (familyName: string, name: string, labels: Record<string, string>) =>
    family(familyName)?.samples.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))?.value;
  return { families, family, gauge, sample };
}

describe.each(BACKENDS)("GET /metrics on %s", (backend) => {
  it("reports the queue, the workers, HTTP requests by route and status, and runs, in Prometheus text and in JSON", async () => {
    const { client, url } = await servers.start(backend, { apiKey: API_KEY, workers: 3 });
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/metrics?format=xml`, { headers: { "x-api-key": API_KEY } })).status).toBe(422);

    const idle = await scrape(url);
    expect(idle.gauge("lg_api_num_pending_runs")).toBe(0);
    expect(idle.gauge("lg_api_num_running_runs")).toBe(0);
    expect(idle.gauge("lg_api_workers_max")).toBe(3);
    expect(idle.gauge("lg_api_workers_available")).toBe(3);
    expect(idle.family("lg_api_num_pending_runs")?.type).toBe("gauge");

    // One run holds the thread; two more wait behind it.
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 3_000 } });
    await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 10 }, multitaskStrategy: "enqueue" });
    const third = await client.runs.create(thread.thread_id, "slow", { input: { steps: 1, delay_ms: 10 }, multitaskStrategy: "enqueue" });
    await expect.poll(async () => (await client.runs.get(thread.thread_id, first.run_id)).status, { timeout: 20_000 }).toBe("running");
    const busy = await scrape(url);
    expect(busy.gauge("lg_api_num_running_runs")).toBe(1);
    expect(busy.gauge("lg_api_num_pending_runs")).toBe(2);
    expect(busy.gauge("lg_api_workers_active")).toBe(1);
    expect(busy.gauge("lg_api_workers_available")).toBe(2);
    expect(busy.gauge("lg_api_pending_runs_wait_time_max")).toBeGreaterThan(0);
    // Its thread runs something, so the waiting run is not "unblocked".
    expect(busy.gauge("lg_api_pending_unblocked_runs_wait_time_max")).toBe(0);

    await client.runs.join(thread.thread_id, third.run_id);
    await client.threads.get("00000000-0000-4000-8000-000000000000").catch(() => undefined);
    const done = await scrape(url);
    expect(done.gauge("lg_api_num_pending_runs")).toBe(0);
    expect(done.gauge("lg_api_num_running_runs")).toBe(0);
    expect(done.gauge("lg_api_workers_active")).toBe(0);

    // The parser names a counter's family without its _total.
    expect(done.family("lg_api_http_requests")?.type).toBe("counter");
    const count = (method: string, path: string, status: string) =>
      done.sample("lg_api_http_requests", "lg_api_http_requests_total", { method, path, status }) ?? 0;
    expect(count("POST", "/threads", "200")).toBe(1);
    expect(count("POST", "/threads/{thread_id}/runs", "200")).toBe(3);
    expect(count("GET", "/threads/{thread_id}", "404")).toBe(1);
    // /metrics, /ok and /info are left out, as on the vendor's server.
    expect(done.family("lg_api_http_requests")!.samples.some((s) => s.labels.path === "/metrics")).toBe(false);
    expect(done.family("lg_api_http_requests_latency_seconds")?.type).toBe("histogram");
    const createdLatency = (name: string, extra: Record<string, string> = {}) =>
      done.sample("lg_api_http_requests_latency_seconds", name, { method: "POST", path: "/threads", ...extra });
    expect(createdLatency("lg_api_http_requests_latency_seconds_count")).toBe(1);
    expect(createdLatency("lg_api_http_requests_latency_seconds_bucket", { le: "+Inf" })).toBe(1);

    expect(done.sample("slipway_run_duration_seconds", "slipway_run_duration_seconds_count", { status: "success" })).toBe(3);
    // The first run slept 3 s in its node.
    expect(done.sample("slipway_run_duration_seconds", "slipway_run_duration_seconds_sum", { status: "success" })).toBeGreaterThan(3);
    expect(done.sample("slipway_run_queue_wait_seconds", "slipway_run_queue_wait_seconds_count", {})).toBe(3);
    expect(done.family("lg_api_pg_pool_max") !== undefined).toBe(backend === "postgres");

    const json = (await (await fetch(`${url}/metrics?format=json`, { headers: { "x-api-key": API_KEY } })).json()) as {
      queue: Record<string, number>;
      workers: Record<string, number>;
      api: { http_requests_total: Array<{ method: string; path: string; status: number; count: number }> };
      postgres?: Record<string, number>;
    };
    expect(json.queue).toMatchObject({ n_pending: 0, n_running: 0 });
    expect(json.workers).toEqual({ max: 3, active: 0, available: 3 });
    expect(json.api.http_requests_total).toContainEqual({ method: "POST", path: "/threads", status: 200, count: 1 });
    expect(json.postgres !== undefined).toBe(backend === "postgres");
  }, 90_000);
});
