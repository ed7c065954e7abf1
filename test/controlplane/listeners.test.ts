import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { startControlPlane, type ControlPlaneFixture } from "./deployments-fixture.ts";
import { insertDeployment } from "../../src/controlplane/deployments/repository.ts";

const VENDOR_LISTENER_REQUIRED = ["compute_type", "compute_id", "compute_config", "id", "created_at", "updated_at"];

const k8s = (computeId: string, namespaces: string[] | null = ["agents"]) => ({
  compute_type: "k8s",
  compute_id: computeId,
  compute_config: { k8s_namespaces: namespaces },
});

describe.each(BACKENDS)("listeners on %s", (backend) => {
  let cp: ControlPlaneFixture;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
  });
  afterAll(async () => cp?.close());

  it("creates (201), gets, lists, patches and deletes (204) a listener", async () => {
    const t = await cp.tenant("self_hosted_enterprise");
    const created = await t.call("POST", "/v2/listeners", { ...k8s("cluster-a"), version: "0.1.0" });
    expect(created.statusCode).toBe(201);
    const listener = created.json();
    for (const field of VENDOR_LISTENER_REQUIRED) expect(listener).toHaveProperty(field);
    expect(listener).toMatchObject({ compute_type: "k8s", compute_id: "cluster-a", version: "0.1.0", compute_config: { k8s_namespaces: ["agents"] } });

    expect((await t.call("GET", `/v2/listeners/${listener.id}`)).json()).toEqual(listener);
    const list = (await t.call("GET", "/v2/listeners")).json();
    expect(list).toEqual({ resources: [listener], offset: 1 });

    const patched = await t.call("PATCH", `/v2/listeners/${listener.id}`, { version: "0.2.0", compute_config: { k8s_namespaces: ["a", "b"] } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: listener.id, version: "0.2.0", compute_id: "cluster-a", compute_config: { k8s_namespaces: ["a", "b"] } });
    // Sending the fixed fields back unchanged is fine.
    const echoed = await t.call("PATCH", `/v2/listeners/${listener.id}`, { compute_type: "k8s", compute_id: "cluster-a" });
    expect(echoed.statusCode).toBe(200);
    expect(echoed.json().version).toBe("0.2.0");

    const deleted = await t.call("DELETE", `/v2/listeners/${listener.id}`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe("");
    expect((await t.call("GET", `/v2/listeners/${listener.id}`)).statusCode).toBe(404);
  });

  it("answers 403 naming the workspace for organizations not on self_hosted_enterprise", async () => {
    const owner = await cp.tenant("self_hosted_enterprise");
    const id = (await owner.call("POST", "/v2/listeners", k8s("shared-name"))).json().id;
    for (const plan of ["free", "plus", "enterprise"] as const) {
      const t = await cp.tenant(plan);
      const calls = [
        await t.call("POST", "/v2/listeners", k8s("c")),
        await t.call("GET", `/v2/listeners/${id}`),
        await t.call("PATCH", `/v2/listeners/${id}`, { version: "1" }),
        await t.call("DELETE", `/v2/listeners/${id}`),
      ];
      for (const res of calls) {
        expect(res.statusCode).toBe(403);
        expect(Object.keys(res.json())).toEqual(["detail"]);
        expect(res.json().detail).toContain(t.workspaceId);
      }
      expect((await t.call("GET", "/v2/listeners")).json()).toEqual({ resources: [], offset: 0 });
    }
    expect((await owner.call("GET", `/v2/listeners/${id}`)).json().version).toBeNull();
  });

  it("answers 404 naming the listener id, also for another workspace's listener", async () => {
    const owner = await cp.tenant();
    const stranger = await cp.tenant();
    const id = (await owner.call("POST", "/v2/listeners", k8s("mine"))).json().id;
    const missing = cp.deps.newId();
    for (const target of [missing, id]) {
      for (const [method, body] of [["GET"], ["PATCH", { version: "x" }], ["DELETE"]] as const) {
        const res = await stranger.call(method, `/v2/listeners/${target}`, body);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ detail: `Listener ID ${target} not found.` });
      }
    }
    expect((await owner.call("GET", `/v2/listeners/${id}`)).json().version).toBeNull();
  });

  it("answers 409 for a second listener with the same compute_id in a workspace", async () => {
    const t = await cp.tenant();
    expect((await t.call("POST", "/v2/listeners", k8s("dup"))).statusCode).toBe(201);
    const again = await t.call("POST", "/v2/listeners", k8s("dup", null));
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toBe(`Listener for workspace ID '${t.workspaceId}' and compute ID 'dup' already exists.`);
    // Another workspace may use the same compute id.
    const other = await cp.tenant();
    expect((await other.call("POST", "/v2/listeners", k8s("dup"))).statusCode).toBe(201);
    expect((await t.call("GET", "/v2/listeners")).json().resources).toHaveLength(1);
  });

  it("refuses changing compute_id (400) and invalid bodies (422), writing nothing", async () => {
    const t = await cp.tenant();
    const listener = (await t.call("POST", "/v2/listeners", k8s("fixed"))).json();
    const changed = await t.call("PATCH", `/v2/listeners/${listener.id}`, { compute_id: "moved" });
    expect(changed.statusCode).toBe(400);
    expect(changed.json().detail).toContain("compute_id cannot be changed");

    const invalid: [string, string, unknown, (string | number)[]][] = [
      ["POST", "/v2/listeners", { ...k8s("x"), compute_type: "ecs" }, ["body", "compute_type"]],
      ["POST", "/v2/listeners", { compute_type: "k8s", compute_config: {} }, ["body", "compute_id"]],
      ["POST", "/v2/listeners", { compute_type: "k8s", compute_id: "x" }, ["body", "compute_config"]],
      ["POST", "/v2/listeners", k8s(""), ["body", "compute_id"]],
      ["POST", "/v2/listeners", k8s("x", ["Not_A_Namespace"]), ["body", "compute_config", "k8s_namespaces", 0]],
      ["POST", "/v2/listeners", { ...k8s("x"), extra: 1 }, ["body", "extra"]],
      ["PATCH", `/v2/listeners/${listener.id}`, { compute_type: "ecs" }, ["body", "compute_type"]],
      ["PATCH", `/v2/listeners/${listener.id}`, { version: 3 }, ["body", "version"]],
      ["PATCH", `/v2/listeners/${listener.id}`, { compute_config: { k8s_namespaces: "agents" } }, ["body", "compute_config", "k8s_namespaces"]],
      ["PATCH", "/v2/listeners/not-a-uuid", { version: "1" }, ["path", "listener_id"]],
      ["GET", "/v2/listeners/not-a-uuid", undefined, ["path", "listener_id"]],
      ["DELETE", "/v2/listeners/not-a-uuid", undefined, ["path", "listener_id"]],
      ["GET", "/v2/listeners?limit=500", undefined, ["query", "limit"]],
    ];
    for (const [method, url, body, loc] of invalid) {
      const res = await t.call(method as "GET", url, body);
      expect(res.statusCode, `${method} ${url} ${JSON.stringify(body)}`).toBe(422);
      expect(res.json().detail.map((p: { loc: unknown }) => p.loc)).toContainEqual(loc);
    }
    expect((await t.call("GET", "/v2/listeners")).json().resources).toEqual([listener]);
  });

  it("refuses deleting a listener that deployments use (409)", async () => {
    const t = await cp.tenant();
    const listener = (await t.call("POST", "/v2/listeners", k8s("busy"))).json();
    // Image deployments on a listener need a container runtime (Kubernetes) this release
    // does not have, so the API refuses to make one; the row stands for one made by a
    // release that has it, sharing this database.
    const deploymentId = cp.deps.newId();
    await insertDeployment(cp.db, {
      id: deploymentId,
      workspaceId: t.workspaceId,
      name: "on-cluster",
      source: "external_docker",
      sourceConfig: { listener_id: listener.id, listener_config: { k8s_namespace: "agents" } } as never,
      status: "READY",
      now: new Date().toISOString(),
    });
    expect((await t.call("GET", "/v2/deployments?remote_reconciled=true")).json().resources).toHaveLength(1);
    const refused = await t.call("DELETE", `/v2/listeners/${listener.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail).toContain(listener.id);
    await cp.db.query("DELETE FROM deployments WHERE id = $1", [deploymentId]);
    expect((await t.call("DELETE", `/v2/listeners/${listener.id}`)).statusCode).toBe(204);
  });
});
