import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveControlPlaneConfig } from "../../src/config/controlplane.ts";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture } from "./deployments-fixture.ts";

/**
 * Issue 31, item 4: a workspace may hold at most `--max-deployments-per-workspace`
 * deployments; past it, POST /v2/deployments answers 403 naming the workspace and the
 * limit, and writes nothing. Concurrent creations count one after the other.
 */
describe.each(BACKENDS)("the per-workspace deployment quota on %s", (backend) => {
  let cp: ControlPlaneFixture;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
    cp.deps.maxDeploymentsPerWorkspace = 3;
  });
  afterAll(async () => cp?.close());

  const count = async (workspaceId: string) =>
    (await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deployments WHERE workspace_id = $1", [workspaceId]))[0].n;

  it("refuses the deployment past the limit with a 403 that says what to do, and writes nothing", async () => {
    const t = await cp.tenant("plus");
    for (const name of ["one", "two", "three"]) expect((await t.call("POST", "/v2/deployments", githubDeployment(name))).statusCode).toBe(201);
    const refused = await t.call("POST", "/v2/deployments", githubDeployment("four"));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      detail: expect.stringMatching(new RegExp(`Workspace ID '${t.workspaceId}' has reached its limit of 3 deployments.*--max-deployments-per-workspace`)),
    });
    expect(await count(t.workspaceId)).toBe(3);
    // Another workspace has its own count.
    const other = await cp.tenant("plus");
    expect((await other.call("POST", "/v2/deployments", githubDeployment("four"))).statusCode).toBe(201);
    // A deployment being deleted no longer counts.
    const listed = (await t.call("GET", "/v2/deployments")).json().resources as { id: string; name: string }[];
    expect((await t.call("DELETE", `/v2/deployments/${listed.find((d) => d.name === "one")!.id}`)).statusCode).toBe(204);
    expect((await t.call("POST", "/v2/deployments", githubDeployment("four"))).statusCode).toBe(201);
  });

  it("lets concurrent creations pass the limit no further", async () => {
    const t = await cp.tenant("plus");
    const answers = await Promise.all(["a", "b", "c", "d", "e"].map((name) => t.call("POST", "/v2/deployments", githubDeployment(name))));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 201, 403, 403]);
    expect(await count(t.workspaceId)).toBe(3);
  });
});

describe("the quota's setting", () => {
  it("defaults to 25, takes the flag over the environment, and refuses what is not a whole number", () => {
    expect(resolveControlPlaneConfig({}, {}).maxDeploymentsPerWorkspace).toBe(25);
    expect(resolveControlPlaneConfig({}, { SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE: "0" }).maxDeploymentsPerWorkspace).toBe(0);
    expect(resolveControlPlaneConfig({ maxDeploymentsPerWorkspace: "7" }, { SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE: "3" }).maxDeploymentsPerWorkspace).toBe(7);
    expect(() => resolveControlPlaneConfig({ maxDeploymentsPerWorkspace: "-1" }, {})).toThrow(/whole number, 0 for no limit/);
    expect(() => resolveControlPlaneConfig({}, { SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE: "lots" })).toThrow(/not 'lots'/);
  });
});
