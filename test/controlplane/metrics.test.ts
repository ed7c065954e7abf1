import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RevisionService } from "../../src/controlplane/revisions/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { parsePrometheusText, type PrometheusFamily } from "../support/prometheus-text.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./deployments-fixture.ts";

/**
 * The control plane's `/metrics` (issue #29): deployments and revisions by status, build
 * durations and its API requests, per workspace, read by Prometheus's own text parser.
 * The router's requests are checked through a real deployment in deploy-git.test.ts.
 */
describe.each(BACKENDS)("the control plane's /metrics on %s", (backend) => {
  let cp: ControlPlaneFixture;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
  });
  afterAll(async () => cp?.close());

  const scrape = async (t: Tenant, prefix: "" | "/api-host" = "") => {
    const res = await t.call("GET", "/metrics", undefined, prefix);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toContain("text/plain; version=0.0.4");
    return parsePrometheusText(res.body);
  };
  const sample = (families: PrometheusFamily[], name: string, labels: Record<string, string>) =>
    families.flatMap((family) => family.samples).find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))?.value;

  it("counts the workspace's deployments, revisions, builds and API requests, and moves when they change", async () => {
    const t = await cp.tenant();
    const before = await scrape(t);
    expect(sample(before, "slipway_deployments", { status: "READY" })).toBeUndefined();

    const created = await t.call("POST", "/v2/deployments", githubDeployment("measured"));
    expect(created.statusCode).toBe(201);
    const { id, latest_revision_id: revisionId } = created.json() as { id: string; latest_revision_id: string };
    expect((await t.call("GET", `/v2/deployments/${id}`)).statusCode).toBe(200);
    expect((await t.call("GET", "/v2/deployments/00000000-0000-4000-8000-000000000000")).statusCode).toBe(404);

    const after = await scrape(t);
    const deployments = after.find((family) => family.name === "slipway_deployments")!.samples;
    expect(deployments.reduce((sum, s) => sum + s.value, 0)).toBe(1);
    const revisions = after.find((family) => family.name === "slipway_revisions")!.samples;
    expect(revisions.map((s) => s.labels.workspace_id)).toEqual(revisions.map(() => t.workspaceId));
    expect(revisions.reduce((sum, s) => sum + s.value, 0)).toBe(1);
    expect(sample(after, "slipway_cp_http_requests_total", { method: "POST", path: "/v2/deployments", status: "201" })).toBe(1);
    expect(sample(after, "slipway_cp_http_requests_total", { method: "GET", path: "/v2/deployments/{deployment_id}", status: "404" })).toBe(1);
    expect(sample(after, "slipway_cp_http_requests_latency_seconds_count", { method: "GET", path: "/v2/deployments/{deployment_id}", status: "200" })).toBe(1);

    // A build that ends: its duration comes from its build log's first and last lines.
    const revisionService = new RevisionService(cp.deps);
    const now = Date.now();
    await cp.db.query(
      `INSERT INTO revision_logs (workspace_id, deployment_id, revision_id, type, level, message, timestamp) VALUES ($1, $2, $3, 'build', 'INFO', 'first', $4), ($1, $2, $3, 'build', 'INFO', 'last', $5)`,
      [t.workspaceId, id, revisionId, new Date(now - 42_000), new Date(now)],
    );
    for (const to of ["AWAITING_BUILD", "BUILDING", "BUILD_FAILED"] as const) {
      await revisionService.advance({ workspaceId: t.workspaceId, deploymentId: id, revisionId, to, now: new Date().toISOString() });
    }
    const built = await scrape(t, "/api-host");
    expect(sample(built, "slipway_build_duration_seconds_count", { outcome: "failed" })).toBe(1);
    expect(sample(built, "slipway_build_duration_seconds_sum", { outcome: "failed" })).toBeCloseTo(42, 0);
    expect(sample(built, "slipway_revisions", { status: "BUILD_FAILED" })).toBe(1);

    const json = await t.call("GET", "/metrics?format=json");
    expect(json.statusCode).toBe(200);
    expect(json.json()).toMatchObject({ revisions: { BUILD_FAILED: 1 }, builds: { failed: { count: 1 } } });
  });

  it("shows a workspace nothing of another's, and needs a key", async () => {
    const [a, b] = [await cp.tenant(), await cp.tenant()];
    expect((await a.call("POST", "/v2/deployments", githubDeployment("theirs"))).statusCode).toBe(201);
    const seen = await scrape(b);
    expect(seen.flatMap((family) => family.samples).filter((s) => s.labels.workspace_id !== b.workspaceId)).toEqual([]);
    expect(sample(seen, "slipway_cp_http_requests_total", { method: "POST", path: "/v2/deployments" })).toBeUndefined();
    expect((await cp.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401);
    expect((await b.call("GET", "/metrics?format=xml")).statusCode).toBe(422);
  });
});
