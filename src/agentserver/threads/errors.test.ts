import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { startThreadsApp, type ThreadsTestApp } from "./test-app.ts";

describe.each(BACKENDS)("threads API errors on %s", (backend) => {
  let t: ThreadsTestApp;
  beforeAll(async () => {
    t = await startThreadsApp(backend);
  });
  afterAll(async () => t?.close());

  it("answers 404 for an unknown thread on every thread route", async () => {
    const id = randomUUID();
    const calls: Array<[string, string, unknown?]> = [
      ["GET", `/threads/${id}`],
      ["PATCH", `/threads/${id}`, { metadata: { a: 1 } }],
      ["DELETE", `/threads/${id}`],
      ["POST", `/threads/${id}/copy`],
      ["GET", `/threads/${id}/state`],
      ["POST", `/threads/${id}/state`, { values: {} }],
      ["PATCH", `/threads/${id}/state`, { metadata: { a: 1 } }],
      ["GET", `/threads/${id}/state/${randomUUID()}`],
      ["POST", `/threads/${id}/state/checkpoint`, { checkpoint: { checkpoint_id: randomUUID() } }],
      ["GET", `/threads/${id}/history`],
      ["POST", `/threads/${id}/history`, { limit: 5 }],
      ["GET", `/threads/${id}/storage`],
    ];
    for (const [method, path, body] of calls) {
      const [status, answer] = await t.call(method, path, body);
      expect([method, path, status]).toEqual([method, path, 404]);
      expect(answer.detail).toBe(`Thread ${id} not found`);
    }
  });

  it("answers 422 naming the field for ids that are not uuids", async () => {
    for (const [method, path] of [
      ["GET", "/threads/not-a-uuid"],
      ["DELETE", "/threads/123"],
      ["GET", "/threads/nope/state"],
      ["GET", "/threads/nope/history"],
    ]) {
      const [status, body] = await t.call(method, path);
      expect([path, status]).toEqual([path, 422]);
      expect(body.detail).toMatch(/^thread_id: /);
    }
    const [status, body] = await t.call("GET", `/threads/${randomUUID()}/state/not-a-checkpoint`);
    expect(status).toBe(422);
    expect(body.detail).toMatch(/^checkpoint_id: /);
    const [badIds, why] = await t.call("POST", "/threads/search", { ids: ["x"] });
    expect(badIds).toBe(422);
    expect(why.detail).toMatch(/^ids\.0: /);
  });

  it("answers 422 naming the field for bad or unsupported bodies, never ignoring them", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    const cases: Array<[string, string, unknown, RegExp]> = [
      ["POST", "/threads", { if_exists: "overwrite" }, /^if_exists: /],
      ["POST", "/threads", { metadata: "text" }, /^metadata: /],
      ["POST", "/threads", { surprise: true }, /surprise/],
      ["POST", "/threads", { ttl: { ttl: 0 } }, /^ttl\.ttl: /],
      ["POST", "/threads", { ttl: { ttl: 5, strategy: "archive" } }, /^ttl\.strategy: /],
      ["POST", "/threads/search", { select: ["thread_id", "context"] }, /^select\.1: /],
      ["POST", "/threads/search", { sort_by: "name" }, /^sort_by: /],
      ["POST", "/threads/search", { limit: 0 }, /^limit: /],
      ["POST", "/threads/search", { extract: { x: "secrets.key" } }, /^extract\.x: path must start with values/],
      ["POST", "/threads/search", { extract: { x: "values..a" } }, /^extract\.x: cannot read the path/],
      ["POST", "/threads/count", { limit: 3 }, /limit/],
      ["POST", "/threads/prune", { strategy: "delete" }, /thread_ids/],
      ["POST", "/threads/prune", { thread_ids: [], strategy: "archive" }, /^strategy: /],
      ["PATCH", `/threads/${thread.thread_id}`, { status: "idle" }, /status/],
      ["POST", `/threads/${thread.thread_id}/state`, { values: {}, checkpoint_id: "a", checkpoint: { checkpoint_id: "b" } }, /^checkpoint_id: disagrees/],
      ["POST", `/threads/${thread.thread_id}/state`, { values: {}, checkpoint: { thread_id: randomUUID() } }, /^checkpoint\.thread_id: /],
      ["POST", `/threads/${thread.thread_id}/state`, { values: "text" }, /^values: /],
      ["PATCH", `/threads/${thread.thread_id}/state`, {}, /metadata/],
      ["POST", `/threads/${thread.thread_id}/history`, { limit: 5000 }, /^limit: /],
      ["POST", `/threads/${thread.thread_id}/state/checkpoint`, {}, /checkpoint/],
    ];
    for (const [method, path, body, detail] of cases) {
      const [status, answer] = await t.call(method, path, body);
      expect([path, JSON.stringify(body), status]).toEqual([path, JSON.stringify(body), 422]);
      expect(answer.detail).toMatch(detail);
    }
    const [include, why] = await t.call("GET", `/threads/${thread.thread_id}?include=ttl,secrets`);
    expect(include).toBe(422);
    expect(why.detail).toMatch(/^include: unknown field "secrets"/);
    const [select, reason] = await t.call("GET", `/threads/${thread.thread_id}/state?select=bogus`);
    expect(select).toBe(422);
    expect(reason.detail).toMatch(/^select\.0: /);
  });

  it("answers 404 for a thread whose graph this server does not have", async () => {
    const thread = await t.client.threads.create({ graphId: "retired_graph" });
    const [status, body] = await t.call("GET", `/threads/${thread.thread_id}/state`);
    expect(status).toBe(404);
    expect(body.detail).toMatch(/Graph "retired_graph"/);
  });

  it("serves every thread route in the OpenAPI document with its response schemas", async () => {
    const [status, doc] = await t.call("GET", "/openapi.json");
    expect(status).toBe(200);
    const expected: Array<[string, string]> = [
      ["/threads", "post"],
      ["/threads/search", "post"],
      ["/threads/count", "post"],
      ["/threads/prune", "post"],
      ["/threads/{thread_id}", "get"],
      ["/threads/{thread_id}", "patch"],
      ["/threads/{thread_id}", "delete"],
      ["/threads/{thread_id}/copy", "post"],
      ["/threads/{thread_id}/state", "get"],
      ["/threads/{thread_id}/state", "post"],
      ["/threads/{thread_id}/state", "patch"],
      ["/threads/{thread_id}/state/{checkpoint_id}", "get"],
      ["/threads/{thread_id}/state/checkpoint", "post"],
      ["/threads/{thread_id}/history", "get"],
      ["/threads/{thread_id}/history", "post"],
      ["/threads/{thread_id}/storage", "get"],
    ];
    for (const [path, method] of expected) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(Object.keys(operation.responses)).toContain("422");
    }
  });
});
