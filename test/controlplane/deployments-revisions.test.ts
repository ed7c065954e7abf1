import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REVISION_READY_CHANNEL } from "../../src/controlplane/revisions/repository.ts";
import { RevisionService } from "../../src/controlplane/revisions/service.ts";
import type { RevisionStatus } from "../../src/controlplane/revisions/state-machine.ts";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./deployments-fixture.ts";

interface Rev {
  id: string;
  status: RevisionStatus;
  status_message: string | null;
  source_revision_config: Record<string, unknown>;
}

describe.each(BACKENDS)("revisions on %s", (backend) => {
  let cp: ControlPlaneFixture;
  let revisionService: RevisionService;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
    revisionService = new RevisionService(cp.deps);
  });
  afterAll(async () => cp?.close());

  async function create(t: Tenant, name: string) {
    const res = await t.call("POST", "/v2/deployments", githubDeployment(name));
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; latest_revision_id: string };
  }
  async function revisions(t: Tenant, id: string, query = ""): Promise<Rev[]> {
    const res = await t.call("GET", `/v2/deployments/${id}/revisions${query}`);
    expect(res.statusCode).toBe(200);
    return res.json().resources;
  }
  const advance = (t: Tenant, deploymentId: string, revisionId: string, to: RevisionStatus) =>
    revisionService.advance({ workspaceId: t.workspaceId, deploymentId, revisionId, to, now: new Date().toISOString() });

  it("does not make a revision for build_on_push alone", async () => {
    const t = await cp.tenant();
    const d = await create(t, "bop");
    const res = await t.call("PATCH", `/v2/deployments/${d.id}`, { source_config: { build_on_push: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ latest_revision_id: d.latest_revision_id, source_config: { build_on_push: true } });
    expect(await revisions(t, d.id)).toHaveLength(1);
  });

  it("makes a revision for source_revision_config, secrets and resource_spec; queues behind the one in flight", async () => {
    const t = await cp.tenant();
    const d = await create(t, "rev-maker");
    const patches = [
      { source_revision_config: { repo_ref: "feature" } },
      { secrets: [{ name: "NEW_KEY", value: "v2" }] },
      { source_config: { resource_spec: { max_scale: 4 } } },
    ];
    for (const patch of patches) {
      const res = await t.call("PATCH", `/v2/deployments/${d.id}`, patch);
      expect(res.statusCode).toBe(200);
    }
    const list = await revisions(t, d.id);
    expect(list).toHaveLength(4);
    // Latest first: the newest waits, the older waiting ones were superseded, the first is still in flight.
    expect(list.map((r) => r.status)).toEqual(["QUEUED", "SKIPPED", "SKIPPED", "CREATING"]);
    expect(list[3].id).toBe(d.latest_revision_id);
    // Each new revision starts from the latest one's config.
    expect(list[0].source_revision_config).toMatchObject({ repo_ref: "feature", langgraph_config_path: "langgraph.json" });
    const deployment = (await t.call("GET", `/v2/deployments/${d.id}`)).json();
    expect(deployment.latest_revision_id).toBe(list[0].id);
    expect(deployment.secrets).toEqual([{ name: "NEW_KEY" }]);
    expect(deployment.source_config.resource_spec).toMatchObject({ max_scale: 4 });

    const queued = await revisions(t, d.id, "?status=QUEUED,CREATING");
    expect(queued.map((r) => r.status)).toEqual(["QUEUED", "CREATING"]);
    expect(await revisions(t, d.id, "?limit=1&offset=1")).toEqual([list[1]]);
  });

  it("keeps the queue rule under concurrent patches: one in flight, one waiting, the rest skipped", async () => {
    const t = await cp.tenant();
    const d = await create(t, "contended");
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: `branch-${i}` } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
    const list = await revisions(t, d.id);
    expect(list).toHaveLength(7);
    expect(list.map((r) => r.status)).toEqual(["QUEUED", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED", "CREATING"]);
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().latest_revision_id).toBe(list[0].id);
  });

  it("interrupting the in-flight revision starts the queued one; a settled revision cannot be interrupted", async () => {
    const t = await cp.tenant();
    const d = await create(t, "interruptible");
    const next = (await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "v2" } })).json().latest_revision_id;
    const res = await t.call("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: d.latest_revision_id, status: "INTERRUPTED", status_message: "Interrupted by request." });
    const [newest] = await revisions(t, d.id);
    expect(newest).toMatchObject({ id: next, status: "CREATING" });
    const again = await t.call("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`);
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toBe("Revision status cannot change from INTERRUPTED to INTERRUPTED.");
  });

  it("announces each revision that is ready to start, on creation and when it leaves the queue", async () => {
    const t = await cp.tenant();
    const heard: string[] = [];
    const stop = await cp.db.listen(REVISION_READY_CHANNEL, (payload) => {
      if (payload.startsWith(t.workspaceId)) heard.push(payload);
    });
    try {
      const d = await create(t, "announced");
      const queued = (await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "b" } })).json().latest_revision_id;
      await t.call("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`);
      const expected = [`${t.workspaceId}:${d.id}:${d.latest_revision_id}`, `${t.workspaceId}:${d.id}:${queued}`];
      for (let i = 0; i < 100 && heard.length < expected.length; i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(expected);
    } finally {
      await stop();
    }
  });

  it("moves active_revision_id only when a revision is DEPLOYED", async () => {
    const t = await cp.tenant();
    const d = await create(t, "traffic");
    for (const to of ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"] as const) {
      await advance(t, d.id, d.latest_revision_id, to);
      expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().active_revision_id).toBeNull();
    }
    await advance(t, d.id, d.latest_revision_id, "DEPLOYED");
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().active_revision_id).toBe(d.latest_revision_id);

    // A later revision that fails never takes traffic.
    const second = (await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "broken" } })).json();
    expect((await revisions(t, d.id))[0].status).toBe("CREATING");
    await advance(t, d.id, second.latest_revision_id, "AWAITING_BUILD");
    await advance(t, d.id, second.latest_revision_id, "BUILD_FAILED");
    const after = (await t.call("GET", `/v2/deployments/${d.id}`)).json();
    expect(after).toMatchObject({ latest_revision_id: second.latest_revision_id, active_revision_id: d.latest_revision_id });
  });

  it("refuses transitions outside the table and a second revision in flight", async () => {
    const t = await cp.tenant();
    const d = await create(t, "strict");
    await expect(advance(t, d.id, d.latest_revision_id, "DEPLOYED")).rejects.toThrow("from CREATING to DEPLOYED");
    const queued = (await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "x" } })).json().latest_revision_id;
    await expect(advance(t, d.id, queued, "CREATING")).rejects.toThrow("already in progress");
    const statuses = (await revisions(t, d.id)).map((r) => r.status);
    expect(statuses).toEqual(["QUEUED", "CREATING"]);
  });

  it("redeploys a revision from its snapshot and returns the deployment", async () => {
    const t = await cp.tenant();
    const d = await create(t, "redeployable");
    await advance(t, d.id, d.latest_revision_id, "CREATE_FAILED");
    await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "other" }, secrets: [] });
    const res = await t.call("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.id).toBe(d.id);
    const [newest] = await revisions(t, d.id);
    expect(newest.id).toBe(body.latest_revision_id);
    expect(newest.source_revision_config).toMatchObject({ repo_ref: "main" });
    expect(body.secrets).toEqual([{ name: "OPENAI_API_KEY" }]);
    const missing = cp.deps.newId();
    const notFound = await t.call("POST", `/v2/deployments/${d.id}/revisions/${missing}/redeploy`);
    expect(notFound.statusCode).toBe(404);
    expect(notFound.json()).toEqual({ detail: `Revision ID ${missing} not found.` });
  });

  it("carries secrets to a new revision when the patch does not give them, and replaces them when it does", async () => {
    const t = await cp.tenant();
    const d = await create(t, "carrier");
    await t.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "a" } });
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().secrets).toEqual([{ name: "OPENAI_API_KEY" }]);
    await t.call("PATCH", `/v2/deployments/${d.id}`, {
      secrets: [
        { name: "B", value: "b" },
        { name: "C", value: "c" },
      ],
    });
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().secrets).toEqual([{ name: "B" }, { name: "C" }]);
  });

  it("accepts immutable fields sent back unchanged, and refuses changes with 400, writing nothing", async () => {
    const t = await cp.tenant();
    const d = await create(t, "fixed");
    const same = await t.call("PATCH", `/v2/deployments/${d.id}`, {
      name: "fixed",
      source: "github",
      source_config: { repo_url: "https://github.com/example/agent", deployment_type: "dev" },
    });
    expect(same.statusCode).toBe(200);
    const changes: [Record<string, unknown>, string][] = [
      [{ name: "renamed" }, "name cannot be changed"],
      [{ source: "external_docker" }, "source cannot be changed"],
      [{ source_config: { repo_url: "https://github.com/example/other" } }, "source_config.repo_url cannot be changed"],
      [{ source_config: { deployment_type: "prod", build_on_push: true } }, "source_config.deployment_type cannot be changed"],
      [{ source_config: { integration_id: cp.deps.newId() } }, "source_config.integration_id cannot be changed"],
      [{ revision_source: "internal_source", source_revision_config: { repo_ref: "x" } }, "revision_source"],
    ];
    for (const [patch, message] of changes) {
      const res = await t.call("PATCH", `/v2/deployments/${d.id}`, patch);
      expect(res.statusCode, JSON.stringify(patch)).toBe(400);
      expect(res.json().detail).toContain(message);
    }
    const after = (await t.call("GET", `/v2/deployments/${d.id}`)).json();
    expect(after).toMatchObject({ name: "fixed", latest_revision_id: d.latest_revision_id, source_config: { build_on_push: false } });
    expect(await revisions(t, d.id)).toHaveLength(1);
  });

  it("rotates a deployed revision's database credential through a new revision on PostgreSQL; 409 where there is none to rotate", async () => {
    const t = await cp.tenant();
    const d = await create(t, "rotated");
    const rotate = () => t.call("POST", `/v2/deployments/${d.id}/rotate-credentials`);
    const nothingDeployed = await rotate();
    expect(nothingDeployed.statusCode).toBe(409);
    for (const to of ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED"] as const) await advance(t, d.id, d.latest_revision_id, to);
    const res = await rotate();
    if (backend === "pglite") {
      // The embedded database is reached through the deployment's own socket: no credential.
      expect(res.statusCode).toBe(409);
      expect(res.json().detail).toContain("embedded database");
      expect(await revisions(t, d.id)).toHaveLength(1);
      return;
    }
    expect(res.statusCode).toBe(200);
    const [rotation, active] = await revisions(t, d.id);
    expect(res.json()).toMatchObject({ latest_revision_id: rotation.id, active_revision_id: active.id });
    expect(rotation).toMatchObject({ status: "CREATING", source_revision_config: { repo_ref: active.source_revision_config.repo_ref } });
    const [{ trigger }] = await cp.deps.db.query<{ trigger: string }>("SELECT trigger FROM revisions WHERE id = $1", [rotation.id]);
    expect(trigger).toBe("rotate_credentials");
  });
});
