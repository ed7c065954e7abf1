import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./deployments-fixture.ts";

/**
 * Issue 16 "No 500 for bad input" and issue 12 point 9 on the control plane: each class
 * of hostile input gets a FastAPI-shaped 4xx naming the field and changes nothing, on
 * both storage back ends.
 */
describe.each(BACKENDS)("hostile input to the control plane on %s", (backend) => {
  let cp: ControlPlaneFixture;
  let t: Tenant;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
    t = await cp.tenant();
  });
  afterAll(async () => {
    await cp?.close();
  });

  /** A request as the vendor's sample client sends it: JSON content type always, `payload` as raw text. */
  const send = (method: InjectOptions["method"], url: string, payload?: string) =>
    cp.app.inject({ method, url, headers: { ...t.headers, "content-type": "application/json" }, payload });
  const names = async () =>
    (await t.call("GET", "/v2/deployments?limit=100"))
      .json()
      .resources.map((d: { name: string }) => d.name)
      .sort();
  const expect422 = (response: Awaited<ReturnType<typeof send>>, loc: (string | number)[], msg: RegExp) => {
    expect(response.statusCode, response.body.slice(0, 300)).toBe(422);
    expect(response.json().detail).toEqual([expect.objectContaining({ loc, msg: expect.stringMatching(msg) })]);
  };
  const create = (name: string) => JSON.stringify(githubDeployment(name));

  it("takes an empty body with Content-Type: application/json as no body on every method (issue 12, point 9)", async () => {
    const d = (await t.call("POST", "/v2/deployments", githubDeployment("sample-client"))).json();
    expect((await send("GET", `/v2/deployments/${d.id}`, "")).statusCode).toBe(200);
    expect((await send("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`, "")).statusCode).toBeLessThan(500);
    const deleted = await send("DELETE", `/v2/deployments/${d.id}`, "");
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().status).toBe("AWAITING_DELETE");
    // A route that needs a body says it is missing, as FastAPI does.
    const missing = await send("POST", "/v2/deployments", "");
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({ detail: [{ loc: ["body"], msg: "Field required", type: "missing" }] });
  });

  it("refuses NUL in a stored string, a query value and a path segment, naming the field", async () => {
    const before = await names();
    expect422(await send("POST", "/v2/deployments", create("a\u0000b")), ["body", "name"], /NUL/);
    expect422(await send("GET", "/v2/deployments?name_contains=%00"), ["query", "name_contains"], /NUL/);
    expect422(
      await send("POST", "/v2/listeners", JSON.stringify({ compute_type: "k8s", compute_id: "c\u0000", compute_config: {} })),
      ["body", "compute_id"],
      /NUL/,
    );
    expect422(await send("GET", "/v2/deployments/%00"), ["path", "deployment_id"], /NUL/);
    expect(await names()).toEqual(before);
  });

  it("refuses lone surrogates instead of storing them mangled", async () => {
    const before = await names();
    expect422(await send("POST", "/v2/deployments", create("x").replace('"x"', '"\\ud800"')), ["body", "name"], /surrogate/);
    expect422(await send("PATCH", `/v2/listeners/${cp.deps.newId()}`, '{"version":"1.\\udc00"}'), ["body", "version"], /surrogate/);
    expect(await names()).toEqual(before);
  });

  it("refuses offsets beyond PostgreSQL's integers on every list", async () => {
    const d = (await t.call("POST", "/v2/deployments", githubDeployment("paged"))).json();
    for (const big of ["99999999999999999999", "1e20"]) {
      for (const list of ["/v2/deployments", "/v2/listeners", `/v2/deployments/${d.id}/revisions`]) {
        expect422(await send("GET", `${list}?offset=${big}`), ["query", "offset"], /must be <= 2147483647/);
      }
      expect422(await send("POST", `/v1/projects/${d.id}/deploy_logs`, `{"offset":${big}}`), ["body", "offset"], /must be <=/);
    }
    expect((await send("GET", "/v2/deployments?offset=2147483647")).json()).toEqual({ resources: [], offset: 2147483647 });
  });

  it("refuses JSON nested 10,000 deep, naming the field", async () => {
    const before = await names();
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    expect422(await send("POST", "/v2/deployments", `{"name":"deep","source_config":${deep}}`), ["body", "source_config"], /nests deeper than 100 levels/);
    expect422(await send("POST", "/v2/listeners", `{"compute_config":${deep}}`), ["body", "compute_config"], /nests deeper/);
    expect(await names()).toEqual(before);
  });

  it("cuts what an error body echoes of the request", async () => {
    const key = "k".repeat(512 * 1024);
    const unknownField = await send("POST", "/v2/deployments", JSON.stringify({ ...githubDeployment("echo"), [key]: 1 }));
    expect(unknownField.statusCode).toBe(422);
    expect(unknownField.body.length).toBeLessThan(1000);
    expect(unknownField.json().detail[0].loc).toEqual(["body", `${"k".repeat(200)}…`]);
    const unknownRoute = await send("GET", `/v2/${"x".repeat(100_000)}`);
    expect(unknownRoute.statusCode).toBe(404);
    expect(unknownRoute.body.length).toBeLessThan(1000);
  });
});
