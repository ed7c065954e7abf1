import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import { createHttpServer } from "../../http/server.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { registerStoreRoutes } from "./routes.ts";
import { SlipwayStore } from "./store.ts";

describe.each(BACKENDS)("/store API on %s", (backend) => {
  let db: Database;
  let app: FastifyInstance;
  let apiUrl: string;
  let client: Client;
  let clock: Date;
  let root: string;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    const store = new SlipwayStore(db, { now: () => clock });
    app = await createHttpServer({ title: "test", version: "0", validationStyle: "message" });
    registerStoreRoutes(app, { store });
    await app.listen({ host: "127.0.0.1", port: 0 });
    apiUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // apiKey null: never pick up a developer's LANGGRAPH_API_KEY from the environment.
    client = new Client({ apiUrl, apiKey: null });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });
  beforeEach(() => {
    clock = new Date("2030-01-01T00:00:00.000Z");
    root = `r${randomBytes(4).toString("hex")}`;
  });

  const call = async (method: string, path: string, body?: unknown, raw?: string) => {
    const response = await fetch(apiUrl + path, {
      method,
      headers: body !== undefined || raw !== undefined ? { "content-type": "application/json" } : {},
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  it("puts, gets and deletes an item through the official client", async () => {
    await client.store.putItem([root, "u1"], "prefs", { theme: "dark", nested: { list: [1, "two"] } });
    const item = await client.store.getItem([root, "u1"], "prefs");
    expect(item).toMatchObject({
      namespace: [root, "u1"],
      key: "prefs",
      value: { theme: "dark", nested: { list: [1, "two"] } },
      created_at: "2030-01-01T00:00:00.000Z",
      updated_at: "2030-01-01T00:00:00.000Z",
    });
    clock = new Date("2030-01-01T00:00:07.000Z");
    await client.store.putItem([root, "u1"], "prefs", { theme: "light" }, { index: false });
    const updated = await client.store.getItem([root, "u1"], "prefs", { refreshTtl: true });
    expect(updated?.value).toEqual({ theme: "light" });
    expect(updated?.updatedAt).toBe("2030-01-01T00:00:07.000Z");
    expect(updated?.createdAt).toBe("2030-01-01T00:00:00.000Z");

    await client.store.deleteItem([root, "u1"], "prefs");
    expect(await client.store.getItem([root, "u1"], "prefs")).toBeNull();
  });

  it("expires an item after its ttl", async () => {
    await client.store.putItem([root], "short", { v: 1 }, { ttl: 1 });
    clock = new Date("2030-01-01T00:00:59.000Z");
    expect((await client.store.getItem([root], "short"))?.value).toEqual({ v: 1 });
    clock = new Date("2030-01-01T00:02:00.000Z");
    expect(await client.store.getItem([root], "short")).toBeNull();
  });

  it("searches with prefix, filter and paging", async () => {
    for (const [i, name] of ["ann", "bob", "cy"].entries()) {
      clock = new Date(Date.UTC(2030, 0, 1, 0, 0, i));
      await client.store.putItem([root, "people", name], "profile", { name, age: 20 + i * 10 });
    }
    await client.store.putItem([`${root}x`], "other", { name: "zed", age: 99 });
    const all = await client.store.searchItems([root]);
    expect(all.items.map((i) => i.value.name)).toEqual(["cy", "bob", "ann"]);
    expect(all.items[0]).toMatchObject({ namespace: [root, "people", "cy"], key: "profile" });
    const older = await client.store.searchItems([root, "people"], { filter: { age: { $lt: 40 } } });
    expect(older.items.map((i) => i.value.name)).toEqual(["bob", "ann"]);
    const exact = await client.store.searchItems([root], { filter: { name: "bob" } });
    expect(exact.items.map((i) => i.key)).toEqual(["profile"]);
    const page = await client.store.searchItems([root], { limit: 1, offset: 1, refreshTtl: false });
    expect(page.items.map((i) => i.value.name)).toEqual(["bob"]);
    await expect(client.store.searchItems([root], { query: "who is bob" })).rejects.toThrow(/HTTP 422.*semantic search/);
  });

  it("lists namespaces through the official client", async () => {
    for (const ns of [
      ["a", "x"],
      ["a", "y"],
      ["b", "x"],
    ])
      await client.store.putItem([root, ...ns], "k", { v: 1 });
    const all = await client.store.listNamespaces({ prefix: [root] });
    expect(all).toEqual({
      namespaces: [
        [root, "a", "x"],
        [root, "a", "y"],
        [root, "b", "x"],
      ],
    });
    const bySuffix = await client.store.listNamespaces({ prefix: [root], suffix: ["x"] });
    expect(bySuffix.namespaces).toEqual([
      [root, "a", "x"],
      [root, "b", "x"],
    ]);
    const shallow = await client.store.listNamespaces({ prefix: [root], maxDepth: 2, limit: 1, offset: 1 });
    expect(shallow.namespaces).toEqual([[root, "b"]]);
  });

  it("accepts repeated namespace parameters and refuses what it cannot honour", async () => {
    await client.store.putItem([root, "a"], "k", { v: 1 });
    const repeated = await call("GET", `/store/items?namespace=${root}&namespace=a&key=k`);
    expect(repeated.status).toBe(200);
    expect(repeated.body.namespace).toEqual([root, "a"]);
    await expect(client.store.putItem([root], "k", { text: "t" }, { index: ["text"] })).rejects.toThrow(/HTTP 422.*index/);
  });

  describe("errors", () => {
    it("answers 422 naming the field for bad namespaces", async () => {
      const dotted = await call("PUT", "/store/items", { namespace: [root, "a.b"], key: "k", value: {} });
      expect(dotted).toEqual({ status: 422, body: { detail: expect.stringMatching(/^namespace: .*periods/) } });
      const empty = await call("PUT", "/store/items", { namespace: [root, ""], key: "k", value: {} });
      expect(empty).toEqual({ status: 422, body: { detail: expect.stringMatching(/^namespace: .*empty/) } });
      const none = await call("PUT", "/store/items", { namespace: [], key: "k", value: {} });
      expect(none.status).toBe(422);
      const search = await call("POST", "/store/items/search", { namespace_prefix: ["a.b"] });
      expect(search).toEqual({ status: 422, body: { detail: expect.stringMatching(/^namespace_prefix: /) } });
      const listing = await call("POST", "/store/namespaces", { suffix: [""] });
      expect(listing).toEqual({ status: 422, body: { detail: expect.stringMatching(/^suffix: /) } });
      const query = await call("GET", `/store/items?namespace=${root}..a&key=k`);
      expect(query).toEqual({ status: 422, body: { detail: expect.stringMatching(/^namespace: /) } });
    });

    it("answers null for a missing item, as the SDKs expect", async () => {
      const missing = await call("GET", `/store/items?namespace=${root}.nothing&key=nope`);
      expect(missing).toEqual({ status: 200, body: null });
    });

    it("answers 422 for bad JSON, unknown fields and wrong types", async () => {
      const badJson = await call("PUT", "/store/items", undefined, '{"namespace": [');
      expect(badJson.status).toBe(422);
      expect(badJson.body.detail).toMatch(/JSON/);
      const unknown = await call("PUT", "/store/items", { namespace: [root], key: "k", value: {}, colour: "red" });
      expect(unknown).toEqual({ status: 422, body: { detail: expect.stringContaining("colour") } });
      const array = await call("PUT", "/store/items", { namespace: [root], key: "k", value: [1] });
      expect(array).toEqual({ status: 422, body: { detail: expect.stringContaining("value") } });
      const missingKey = await call("DELETE", "/store/items", { namespace: [root] });
      expect(missingKey).toEqual({ status: 422, body: { detail: expect.stringContaining("key") } });
      const ttl = await call("PUT", "/store/items", { namespace: [root], key: "k", value: {}, ttl: -1 });
      expect(ttl).toEqual({ status: 422, body: { detail: expect.stringContaining("ttl") } });
      const param = await call("GET", `/store/items?namespace=${root}&key=k&colour=red`);
      expect(param.status).toBe(422);
      const depth = await call("POST", "/store/namespaces", { max_depth: 0 });
      expect(depth).toEqual({ status: 422, body: { detail: expect.stringContaining("max_depth") } });
      const operator = await call("POST", "/store/items/search", { filter: { age: { $regex: "x" } } });
      expect(operator).toEqual({ status: 422, body: { detail: expect.stringMatching(/^filter\.age\.\$regex: /) } });
      expect(await call("GET", `/store/items?namespace=${root}&key=k`)).toMatchObject({ status: 200, body: null });
    });

    it("deletes idempotently with a JSON body on DELETE", async () => {
      await client.store.putItem([root], "k", { v: 1 });
      expect(await call("DELETE", "/store/items", { namespace: [root], key: "k" })).toEqual({ status: 204, body: undefined });
      expect(await call("DELETE", "/store/items", { namespace: [root], key: "k" })).toEqual({ status: 204, body: undefined });
    });
  });

  it("declares the vendor's success statuses in its OpenAPI document", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(Object.keys(doc.paths["/store/items"].put.responses)).toContain("204");
    expect(Object.keys(doc.paths["/store/items"].delete.responses)).toContain("204");
    expect(Object.keys(doc.paths["/store/items"].get.responses)).toContain("200");
    expect(Object.keys(doc.paths["/store/items/search"].post.responses)).toContain("200");
    expect(Object.keys(doc.paths["/store/namespaces"].post.responses)).toContain("200");
  });
});
