import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./deployments-fixture.ts";

/**
 * Point 5 of the issue: `{"detail": "..."}` for 400/401/403/404/409, FastAPI's
 * HTTPValidationError for 422 with FastAPI `loc` paths, and bad input of every kind is a
 * 4xx (never a 500) that writes nothing.
 */
describe.each(BACKENDS)("deployment errors on %s", (backend) => {
  let cp: ControlPlaneFixture;
  let t: Tenant;
  let existing: { id: string; latest_revision_id: string };
  beforeAll(async () => {
    cp = await startControlPlane(backend);
    t = await cp.tenant();
    existing = (await t.call("POST", "/v2/deployments", githubDeployment("existing"))).json();
  });
  afterAll(async () => cp?.close());

  async function rowCounts() {
    const [d] = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deployments");
    const [r] = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM revisions");
    const [u] = await cp.db.query<{ t: string }>("SELECT max(updated_at)::text AS t FROM deployments");
    return { deployments: d.n, revisions: r.n, lastUpdate: u.t };
  }

  /** Asserts the HTTPValidationError shape and that one problem sits at `loc`. */
  function expect422(res: { statusCode: number; json(): any }, loc: (string | number)[]) {
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(Object.keys(body)).toEqual(["detail"]);
    expect(Array.isArray(body.detail)).toBe(true);
    for (const problem of body.detail) {
      expect(Object.keys(problem).sort()).toEqual(["loc", "msg", "type"]);
      expect(typeof problem.msg).toBe("string");
      expect(typeof problem.type).toBe("string");
    }
    expect(body.detail.map((p: { loc: unknown }) => p.loc)).toContainEqual(loc);
  }

  it("answers 401 {detail} without credentials, at the root and under /api-host", async () => {
    for (const prefix of ["", "/api-host"]) {
      const res = await cp.app.inject({ method: "GET", url: `${prefix}/v2/deployments` });
      expect(res.statusCode).toBe(401);
      expect(typeof res.json().detail).toBe("string");
    }
  });

  it("names the path parameter of a non-uuid id", async () => {
    expect422(await t.call("GET", "/v2/deployments/not-a-uuid"), ["path", "deployment_id"]);
    expect422(await t.call("PATCH", "/v2/deployments/123", { source_config: { build_on_push: true } }), ["path", "deployment_id"]);
    expect422(await t.call("DELETE", "/v2/deployments/123"), ["path", "deployment_id"]);
    expect422(await t.call("GET", `/v2/deployments/${existing.id}/revisions/nope`), ["path", "revision_id"]);
    expect422(await t.call("POST", `/v2/deployments/x/revisions/${existing.latest_revision_id}/redeploy`), ["path", "deployment_id"]);
  });

  it("names the query parameter of bad list filters and page bounds", async () => {
    expect422(await t.call("GET", "/v2/deployments?limit=0"), ["query", "limit"]);
    expect422(await t.call("GET", "/v2/deployments?limit=101"), ["query", "limit"]);
    expect422(await t.call("GET", "/v2/deployments?limit=ten"), ["query", "limit"]);
    expect422(await t.call("GET", "/v2/deployments?offset=-1"), ["query", "offset"]);
    expect422(await t.call("GET", "/v2/deployments?deployment_type=staging"), ["query", "deployment_type"]);
    expect422(await t.call("GET", "/v2/deployments?status=RUNNING"), ["query", "status"]);
    expect422(await t.call("GET", "/v2/deployments?deployment_ids=abc"), ["query", "deployment_ids"]);
    expect422(await t.call("GET", `/v2/deployments/${existing.id}/revisions?status=DEPLOYED,NOPE`), ["query", "status"]);
    expect422(await t.call("DELETE", "/v2/deployments?deployment_ids=abc"), ["query", "deployment_ids", 0]);
    expect422(await t.call("DELETE", "/v2/deployments"), ["query", "deployment_ids"]);
  });

  it("refuses bad create bodies with 422 at the field, writing nothing", async () => {
    const before = await rowCounts();
    const { source_config: _dropped, ...noSourceConfig } = githubDeployment("x");
    const cases: [unknown, (string | number)[]][] = [
      [githubDeployment("x", { name: 5 }), ["body", "name"]],
      [githubDeployment(""), ["body", "name"]],
      [noSourceConfig, ["body", "source_config"]],
      [githubDeployment("x", { source: "gitlab" }), ["body", "source"]],
      [githubDeployment("x", { source_config: { repo_url: "https://x/y", deployment_type: "staging" } }), ["body", "source_config", "deployment_type"]],
      [githubDeployment("x", { source_config: { repo_url: "https://x/y", build_on_push: "yes" } }), ["body", "source_config", "build_on_push"]],
      [githubDeployment("x", { source_config: { repo_url: 42 } }), ["body", "source_config", "repo_url"]],
      [githubDeployment("x", { source_config: { repo_url: "https://x/y", integration_id: "not-uuid" } }), ["body", "source_config", "integration_id"]],
      [githubDeployment("x", { source_config: { repo_url: "https://x/y", resource_spec: { cpu: 99 } } }), ["body", "source_config", "resource_spec", "cpu"]],
      [githubDeployment("x", { unexpected: true }), ["body", "unexpected"]],
      [githubDeployment("x", { secrets: [{ name: "OK_NAME" }] }), ["body", "secrets", 0, "value"]],
      [githubDeployment("x", { secrets: "FOO=bar" }), ["body", "secrets"]],
      // Rules that depend on the source:
      [githubDeployment("x", { source_config: {} }), ["body", "source_config", "repo_url"]],
      [githubDeployment("x", { source_revision_config: { repo_ref: "main" } }), ["body", "source_revision_config", "langgraph_config_path"]],
      [
        githubDeployment("x", { source_revision_config: { langgraph_config_path: "l.json", image_uri: "img" } }),
        ["body", "source_revision_config", "image_uri"],
      ],
      // Image sources need a container runtime this platform does not have.
      [
        { ...githubDeployment("x"), source: "external_docker", source_revision_config: { image_uri: "img", langgraph_config_path: "l.json" } },
        ["body", "source"],
      ],
      [
        githubDeployment("x", {
          source_config: { repo_url: "https://x/y", build_on_push: true },
          source_revision_config: { repo_ref: "refs/tags/v1", langgraph_config_path: "l.json" },
        }),
        ["body", "source_config", "build_on_push"],
      ],
      [githubDeployment("x", { source_config: { repo_url: "https://x/y", listener_id: cp.deps.newId() } }), ["body", "source_config", "listener_id"]],
    ];
    for (const [body, loc] of cases) expect422(await t.call("POST", "/v2/deployments", body), loc);
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses reserved and duplicate secret names with 422, and accepts documented user settings", async () => {
    const before = await rowCounts();
    for (const name of ["PORT", "DATABASE_URI", "REDIS_URI", "LANGGRAPH_RUNTIME", "LANGSMITH_API_KEY", "SLIPWAY_ANYTHING", "port"]) {
      const res = await t.call(
        "POST",
        "/v2/deployments",
        githubDeployment("reserved", {
          secrets: [
            { name: "FINE", value: "1" },
            { name, value: "x" },
          ],
        }),
      );
      expect422(res, ["body", "secrets", 1, "name"]);
      expect(res.json().detail[0].msg).toContain("reserved");
    }
    expect422(
      await t.call(
        "POST",
        "/v2/deployments",
        githubDeployment("dup", {
          secrets: [
            { name: "A", value: "1" },
            { name: "A", value: "2" },
          ],
        }),
      ),
      ["body", "secrets", 1, "name"],
    );
    expect422(await t.call("POST", "/v2/deployments", githubDeployment("bad-name", { secrets: [{ name: "1BAD-NAME", value: "x" }] })), [
      "body",
      "secrets",
      0,
      "name",
    ]);
    expect422(await t.call("PATCH", `/v2/deployments/${existing.id}`, { secrets: [{ name: "PORT", value: "1" }] }), ["body", "secrets", 0, "name"]);
    expect(await rowCounts()).toEqual(before);
    const allowed = await t.call("POST", "/v2/deployments", githubDeployment("allowed", { secrets: [{ name: "LANGSMITH_TRACING", value: "true" }] }));
    expect(allowed.statusCode).toBe(201);
  });

  it("refuses bad patch bodies with 422 and leaves the deployment as it was", async () => {
    const before = await rowCounts();
    const cases: [unknown, (string | number)[]][] = [
      [{ source_config: { build_on_push: "true" } }, ["body", "source_config", "build_on_push"]],
      [{ source_revision_config: { repo_ref: 1 } }, ["body", "source_revision_config", "repo_ref"]],
      [{ source_revision_config: { image_uri: "img" } }, ["body", "source_revision_config", "image_uri"]],
      [{ source_revision_config: { repo_ref: "refs/tags/v2" }, source_config: { build_on_push: true } }, ["body", "source_config", "build_on_push"]],
      [{ name: "" }, ["body", "name"]],
      [{ surprise: 1 }, ["body", "surprise"]],
      [[], ["body"]],
    ];
    for (const [body, loc] of cases) expect422(await t.call("PATCH", `/v2/deployments/${existing.id}`, body), loc);
    expect(await rowCounts()).toEqual(before);
  });

  it("answers malformed JSON, empty and oversized bodies and wrong content types with a 4xx, never a 500", async () => {
    const before = await rowCounts();
    const send = (payload: string, contentType = "application/json") =>
      cp.app.inject({ method: "POST", url: "/v2/deployments", headers: { ...t.headers, "content-type": contentType }, payload });
    const malformed = await send('{"name": "x", ');
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().detail[0].loc).toEqual(["body"]);
    expect((await send("")).statusCode).toBe(422);
    expect((await send("null")).statusCode).toBe(422);
    expect((await send("name=x", "text/plain")).statusCode).toBe(422);
    expect((await send("<name>x</name>", "application/xml")).statusCode).toBe(415);
    const huge = JSON.stringify(githubDeployment("huge", { secrets: [{ name: "BIG", value: "x".repeat(2 * 1024 * 1024) }] }));
    const oversized = await send(huge);
    expect(oversized.statusCode).toBe(413);
    expect(typeof oversized.json().detail).toBe("string");
    const patchHuge = await cp.app.inject({
      method: "PATCH",
      url: `/v2/deployments/${existing.id}`,
      headers: { ...t.headers, "content-type": "application/json" },
      payload: huge,
    });
    expect(patchHuge.statusCode).toBe(413);
    expect(await rowCounts()).toEqual(before);
  });

  it("answers an agent API call sent to the control plane (an SDK given its root) with a 404 saying where that API is", async () => {
    for (const [method, url, prefix] of [
      ["POST", "/threads", ""],
      ["POST", "/assistants/search", "/api-host"],
      ["GET", "/runs/crons", ""],
    ] as const) {
      const res = await t.call(method, url, method === "POST" ? {} : undefined, prefix);
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toContain("/deployments/<deployment id>");
    }
    const other = await t.call("GET", "/v2/nothing-here");
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ detail: "Not Found: GET /v2/nothing-here" });
  });

  it("answers 404 {detail} naming the id for missing deployments and revisions", async () => {
    const missing = cp.deps.newId();
    for (const [method, url] of [
      ["GET", `/v2/deployments/${missing}`],
      ["PATCH", `/v2/deployments/${missing}`],
      ["DELETE", `/v2/deployments/${missing}`],
      ["GET", `/v2/deployments/${missing}/revisions`],
    ] as const) {
      const res = await t.call(method, url, method === "PATCH" ? {} : undefined);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: `Deployment ID ${missing} not found.` });
    }
    const rev = await t.call("GET", `/v2/deployments/${existing.id}/revisions/${missing}`);
    expect(rev.statusCode).toBe(404);
    expect(rev.json()).toEqual({ detail: `Revision ID ${missing} not found.` });
  });
});
