import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { call, startAssistantServer, type AssistantTestServer } from "./testing.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe.each(BACKENDS)("assistants errors and edges on %s", (backend) => {
  let server: AssistantTestServer;
  let url: string;
  beforeAll(async () => {
    server = await startAssistantServer(backend);
    url = server.url;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers 404 naming an unknown id, a non-uuid and an unknown graph", async () => {
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { name: "x" }],
      ["DELETE", "", undefined],
      ["POST", "/versions", {}],
      ["POST", "/latest", { version: 1 }],
      ["GET", "/graph", undefined],
      ["GET", "/schemas", undefined],
      ["GET", "/subgraphs", undefined],
    ] as const) {
      for (const id of [UNKNOWN, "no-such-thing"]) {
        const res = await call(url, method, `/assistants/${id}${suffix}`, body);
        expect([method, suffix, res.status]).toEqual([method, suffix, 404]);
        expect(res.body.detail).toContain(id);
      }
    }
    const graph = await call(url, "POST", "/assistants", { graph_id: "nope" });
    expect(graph).toMatchObject({ status: 404, body: { detail: 'Graph "nope" not found' } });
    const patch = await call(url, "PATCH", "/assistants/agent", { graph_id: "nope" });
    expect(patch).toMatchObject({ status: 404, body: { detail: 'Graph "nope" not found' } });
    await expect(server.client.assistants.get(UNKNOWN)).rejects.toThrow(/HTTP 404/);
  });

  it("refuses bad bodies with 422 naming the field", async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/assistants", {}, "graph_id"],
      ["POST", "/assistants", { graph_id: "agent", bogus: 1 }, "bogus"],
      ["POST", "/assistants", { graph_id: "agent", if_exists: "overwrite" }, "if_exists"],
      ["POST", "/assistants", { graph_id: "agent", assistant_id: "not-a-uuid" }, "assistant_id"],
      ["POST", "/assistants", { graph_id: "agent", assistant_id: `urn:uuid:${UNKNOWN}` }, "assistant_id"],
      ["POST", "/assistants", { graph_id: "agent", metadata: [1] }, "metadata"],
      ["POST", "/assistants", { graph_id: "agent", metadata: null }, "metadata"],
      ["POST", "/assistants", { graph_id: "agent", name: null }, "name"],
      ["PATCH", "/assistants/agent", { version: 3 }, "version"],
      ["PATCH", "/assistants/agent", { config: "x" }, "config"],
      ["PATCH", "/assistants/agent", { config: { recursion_limit: "many" } }, "config.recursion_limit"],
      ["POST", "/assistants", { graph_id: "agent", config: { tags: [{}] } }, "config.tags"],
      ["POST", "/assistants/search", { limit: 0 }, "limit"],
      ["POST", "/assistants/search", { limit: 1001 }, "limit"],
      ["POST", "/assistants/search", { offset: -1 }, "offset"],
      ["POST", "/assistants/search", { sort_by: "version" }, "sort_by"],
      ["POST", "/assistants/search", { sort_order: "up" }, "sort_order"],
      ["POST", "/assistants/search", { select: ["assistant_id", "secret"] }, "select"],
      ["POST", "/assistants/count", { limit: 5 }, "limit"],
      ["POST", "/assistants/agent/versions", { limit: 0 }, "limit"],
      ["POST", "/assistants/agent/latest", {}, "version"],
      ["POST", "/assistants/agent/latest", { version: "one" }, "version"],
      ["GET", "/assistants/agent/graph?xray=sometimes", undefined, "xray"],
      ["GET", "/assistants/agent/subgraphs?recurse=maybe", undefined, "recurse"],
      ["DELETE", "/assistants/agent?delete_threads=true", undefined, "delete_threads"],
      ["DELETE", "/assistants/agent?cascade=true", undefined, "cascade"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await call(url, method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 422]);
      expect(typeof res.body.detail).toBe("string");
      expect(res.body.detail).toContain(field);
    }
    // Nothing was half-done by the refused delete.
    expect((await server.client.assistants.get("agent")).graph_id).toBe("agent");
  });

  it("answers 409 for a duplicate id unless if_exists is do_nothing", async () => {
    const body = { graph_id: "agent", assistant_id: "7c2c6f2e-1b1a-4c47-9f67-2d0d6f1c3b10", name: "first" };
    expect((await call(url, "POST", "/assistants", body)).status).toBe(200);
    const again = await call(url, "POST", "/assistants", { ...body, name: "second" });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(body.assistant_id);
    const kept = await call(url, "POST", "/assistants", { ...body, name: "second", if_exists: "do_nothing" });
    expect(kept).toMatchObject({ status: 200, body: { name: "first", version: 1 } });
    // The id of a system assistant is taken too.
    expect((await call(url, "POST", "/assistants", { graph_id: "agent", assistant_id: "fe096781-5601-53d2-b2f6-0d3403f7e9ca" })).status).toBe(409);
  });

  it("takes a null description as 'none', on create and on patch", async () => {
    const made = await call(url, "POST", "/assistants", { graph_id: "agent", description: null });
    expect(made).toMatchObject({ status: 200, body: { description: null } });
    const described = await call(url, "PATCH", `/assistants/${made.body.assistant_id}`, { description: "now described" });
    expect(described.body.description).toBe("now described");
    const kept = await call(url, "PATCH", `/assistants/${made.body.assistant_id}`, { name: "renamed" });
    expect(kept.body).toMatchObject({ description: "now described", name: "renamed", version: 3 });
    const cleared = await call(url, "PATCH", `/assistants/${made.body.assistant_id}`, { description: null });
    expect(cleared.body).toMatchObject({ description: null, version: 4 });
  });

  it("sets the latest version from the body or the query, 404 for an unknown version", async () => {
    const a = (await call(url, "POST", "/assistants", { graph_id: "agent", name: "one" })).body;
    await call(url, "PATCH", `/assistants/${a.assistant_id}`, { name: "two" });
    const byQuery = await call(url, "POST", `/assistants/${a.assistant_id}/latest?version=1`);
    expect(byQuery).toMatchObject({ status: 200, body: { version: 1, name: "one" } });
    const byBody = await call(url, "POST", `/assistants/${a.assistant_id}/latest`, { version: 2 });
    expect(byBody).toMatchObject({ status: 200, body: { version: 2, name: "two" } });
    const missing = await call(url, "POST", `/assistants/${a.assistant_id}/latest`, { version: 9 });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("version 9");
    // Bare POSTs to the listing endpoints mean an empty body.
    expect((await call(url, "POST", `/assistants/${a.assistant_id}/versions`)).body.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(typeof (await call(url, "POST", "/assistants/count")).body).toBe("number");
  });

  it("deletes threads through the threads domain's hook when asked, and only then", async () => {
    const deleted: string[] = [];
    const other = await server.startApp({ deleteThreadsOf: async (id) => void deleted.push(id) });
    const a = (await call(other.url, "POST", "/assistants", { graph_id: "agent" })).body;
    const b = (await call(other.url, "POST", "/assistants", { graph_id: "agent" })).body;
    const res = await call(other.url, "DELETE", `/assistants/${a.assistant_id}?delete_threads=true`);
    expect(res).toMatchObject({ status: 200, body: {} });
    expect((await call(other.url, "DELETE", `/assistants/${b.assistant_id}?delete_threads=false`)).status).toBe(200);
    expect(deleted).toEqual([a.assistant_id]);
    expect((await call(other.url, "GET", `/assistants/${a.assistant_id}`)).status).toBe(404);
  });

  it("serves an OpenAPI document with the vendor's required fields", async () => {
    const doc = (await call(url, "GET", "/openapi.json")).body;
    for (const path of [
      "/assistants",
      "/assistants/search",
      "/assistants/count",
      "/assistants/{assistant_id}",
      "/assistants/{assistant_id}/graph",
      "/assistants/{assistant_id}/subgraphs",
      "/assistants/{assistant_id}/subgraphs/{namespace}",
      "/assistants/{assistant_id}/schemas",
      "/assistants/{assistant_id}/versions",
      "/assistants/{assistant_id}/latest",
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const assistant = doc.paths["/assistants/{assistant_id}"].get.responses["200"].content["application/json"].schema;
    expect(assistant.required).toEqual(expect.arrayContaining(["assistant_id", "graph_id", "config", "created_at", "updated_at", "metadata"]));
    const schemas = doc.paths["/assistants/{assistant_id}/schemas"].get.responses["200"].content["application/json"].schema;
    expect(schemas.required).toEqual(expect.arrayContaining(["graph_id", "state_schema"]));
    const create = doc.paths["/assistants"].post.requestBody.content["application/json"].schema;
    expect(Object.keys(create.properties).sort()).toEqual(["assistant_id", "config", "context", "description", "graph_id", "if_exists", "metadata", "name"]);
  });
});
