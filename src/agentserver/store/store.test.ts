import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Operation } from "@langchain/langgraph-checkpoint";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwayStore } from "./store.ts";

const MINUTE = 60_000;

describe.each(BACKENDS)("SlipwayStore on %s", (backend) => {
  let db: Database;
  let clock: Date;
  let store: SlipwayStore;
  let root: string;
  const tick = (ms: number) => (clock = new Date(clock.getTime() + ms));

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
  });
  afterAll(async () => db?.close());
  beforeEach(() => {
    clock = new Date("2030-01-01T00:00:00.000Z");
    store = new SlipwayStore(db, { now: () => clock });
    // Every test writes under its own root label, so tests never see each other's items.
    root = `r${randomBytes(4).toString("hex")}`;
  });

  it("puts, gets, updates and deletes an item", async () => {
    expect(await store.get([root, "u1"], "prefs")).toBeNull();
    await store.put([root, "u1"], "prefs", { theme: "dark", nested: { list: [1, "two"] } });
    const first = await store.get([root, "u1"], "prefs");
    expect(first).toMatchObject({ namespace: [root, "u1"], key: "prefs", value: { theme: "dark", nested: { list: [1, "two"] } } });
    expect(first!.createdAt.toISOString()).toBe("2030-01-01T00:00:00.000Z");

    tick(5_000);
    await store.put([root, "u1"], "prefs", { theme: "light" });
    const second = await store.get([root, "u1"], "prefs");
    expect(second!.value).toEqual({ theme: "light" });
    expect(second!.createdAt.toISOString()).toBe("2030-01-01T00:00:00.000Z");
    expect(second!.updatedAt.toISOString()).toBe("2030-01-01T00:00:05.000Z");

    await store.delete([root, "u1"], "prefs");
    expect(await store.get([root, "u1"], "prefs")).toBeNull();
  });

  it("runs a mixed batch in order, telling operations apart by their fields", async () => {
    const ops = [
      { namespace: [root, "b"], key: "k", value: { n: 1 } },
      { namespace: [root, "b"], key: "k" },
      { namespacePrefix: [root], limit: 10, offset: 0 },
      { matchConditions: [{ matchType: "prefix", path: [root] }], limit: 10, offset: 0 },
      { namespace: [root, "b"], key: "k", value: null },
      { namespace: [root, "b"], key: "k" },
    ] as Operation[];
    const [put, got, found, namespaces, deleted, gone] = (await store.batch(ops)) as unknown[];
    expect(put).toBeUndefined();
    expect(deleted).toBeUndefined();
    expect((got as { value: unknown }).value).toEqual({ n: 1 });
    expect((found as { key: string }[]).map((i) => i.key)).toEqual(["k"]);
    expect(namespaces).toEqual([[root, "b"]]);
    expect(gone).toBeNull();
    await expect(store.batch([{ bogus: true } as unknown as Operation])).rejects.toThrow(/unknown store operation/);
  });

  it("rolls back the whole batch when one operation fails", async () => {
    const ops = [
      { namespace: [root], key: "kept?", value: { n: 1 } },
      { namespace: [root, "bad.label"], key: "k", value: { n: 2 } },
    ] as Operation[];
    await expect(store.batch(ops)).rejects.toThrow(/periods/);
    expect(await store.get([root], "kept?")).toBeNull();
  });

  it("refuses bad namespaces, non-object values and indexed fields", async () => {
    await expect(store.put([root, "a.b"], "k", { x: 1 })).rejects.toThrow(/periods/);
    await expect(store.put([root, ""], "k", { x: 1 })).rejects.toThrow(/empty/);
    await expect(store.put([], "k", { x: 1 })).rejects.toThrow(/empty/);
    await expect(store.put(["langgraph", root], "k", { x: 1 })).rejects.toThrow(/reserved/);
    await expect(store.put([root], "k", [1, 2] as unknown as Record<string, unknown>)).rejects.toThrow(/value: must be an object/);
    await expect(store.put([root], "k", { text: "x" }, ["text"])).rejects.toThrow(/index: .*store\.index in langgraph.json/);
    await store.put([root, "a:b"], "k", { x: 1 }, false);
    expect((await store.get([root, "a:b"], "k"))!.value).toEqual({ x: 1 });
  });

  it("searches a namespace prefix exactly, newest first, with limit and offset", async () => {
    const put = async (ns: string[], key: string) => {
      tick(1_000);
      await store.put([root, ...ns], key, { key });
    };
    await put(["a"], "one");
    await put(["a", "b"], "two");
    await put(["ab"], "not-under-a");
    await put(["a-b"], "not-under-a-either");
    await put(["a", "b", "c"], "three");
    const keys = async (prefix: string[], options = {}) => (await store.search([root, ...prefix], options)).map((i) => i.key);
    expect(await keys(["a"])).toEqual(["three", "two", "one"]);
    expect(await keys(["a", "b"])).toEqual(["three", "two"]);
    expect(await keys([])).toHaveLength(5);
    expect(await keys(["a"], { limit: 1, offset: 1 })).toEqual(["two"]);
    expect(await keys(["a"], { limit: 0 })).toEqual([]);
    await expect(store.search([root], { limit: -1 })).rejects.toThrow(/limit/);
  });

  it("filters on value fields with equality and comparison operators", async () => {
    const people = [
      { key: "ann", value: { name: "ann", age: 31, team: "x", tags: ["a"] } },
      { key: "bob", value: { name: "bob", age: 25, team: "y", tags: ["b"] } },
      { key: "cy", value: { name: "cy", age: "unknown", team: "x" } },
      { key: "dee", value: { name: "dee", age: 40 } },
    ];
    for (const p of people) await store.put([root, "people"], p.key, p.value);
    const match = async (filter: Record<string, unknown>) => (await store.search([root], { filter })).map((i) => i.key).sort();
    expect(await match({ team: "x" })).toEqual(["ann", "cy"]);
    expect(await match({ team: "x", age: 31 })).toEqual(["ann"]);
    expect(await match({ tags: ["b"] })).toEqual(["bob"]);
    expect(await match({ age: { $eq: 25 } })).toEqual(["bob"]);
    expect(await match({ team: { $ne: "x" } })).toEqual(["bob", "dee"]);
    expect(await match({ age: { $gt: 25 } })).toEqual(["ann", "dee"]);
    expect(await match({ age: { $gte: 25, $lt: 40 } })).toEqual(["ann", "bob"]);
    expect(await match({ age: { $lte: 31 } })).toEqual(["ann", "bob"]);
    expect(await match({ name: { $gt: "bob" } })).toEqual(["cy", "dee"]);
    expect(await match({ team: "z" })).toEqual([]);
    await expect(match({ age: { $in: [25] } })).rejects.toThrow(/filter\.age\.\$in: unsupported operator/);
    await expect(match({ age: { $gt: [1] } })).rejects.toThrow(/number or a string/);
  });

  it("refuses semantic search instead of answering with a listing", async () => {
    await store.put([root], "k", { text: "hello" });
    await expect(store.search([root], { query: "greeting" })).rejects.toThrow(/query: semantic search/);
  });

  it("lists namespaces with prefix, suffix wildcards, depth and paging", async () => {
    for (const ns of [
      ["users", "u1", "prefs"],
      ["users", "u2", "prefs"],
      ["users", "u2", "notes"],
      ["docs", "v1"],
    ]) {
      await store.put([root, ...ns], "k", { x: 1 });
    }
    const list = (options: Parameters<SlipwayStore["listNamespaces"]>[0]) => store.listNamespaces(options);
    expect(await list({ prefix: [root] })).toEqual([
      [root, "docs", "v1"],
      [root, "users", "u1", "prefs"],
      [root, "users", "u2", "notes"],
      [root, "users", "u2", "prefs"],
    ]);
    expect(await list({ prefix: [root, "users"], suffix: ["prefs"] })).toEqual([
      [root, "users", "u1", "prefs"],
      [root, "users", "u2", "prefs"],
    ]);
    expect(await list({ prefix: [root, "*", "u2"] })).toEqual([
      [root, "users", "u2", "notes"],
      [root, "users", "u2", "prefs"],
    ]);
    expect(await list({ prefix: [root], suffix: ["u2", "*"] })).toHaveLength(2);
    expect(await list({ prefix: [root], maxDepth: 2 })).toEqual([
      [root, "docs"],
      [root, "users"],
    ]);
    expect(await list({ prefix: [root], limit: 2, offset: 1 })).toEqual([
      [root, "users", "u1", "prefs"],
      [root, "users", "u2", "notes"],
    ]);
    await expect(list({ prefix: [root], maxDepth: 0 })).rejects.toThrow(/max_depth/);
  });

  it("expires items after their ttl, refreshes on read, and sweeps them", async () => {
    await store.put([root, "t"], "short", { v: 1 }, undefined, { ttl: 1 });
    await store.put([root, "t"], "forever", { v: 2 });
    tick(50_000);
    expect(await store.get([root, "t"], "short", { refreshTtl: true })).not.toBeNull(); // now lives until +110s
    tick(50_000);
    expect(await store.get([root, "t"], "short", { refreshTtl: false })).not.toBeNull(); // not extended
    tick(20_000);
    expect(await store.get([root, "t"], "short")).toBeNull();
    expect((await store.search([root])).map((i) => i.key)).toEqual(["forever"]);
    const visible = await store.listNamespaces({ prefix: [root] });
    expect(visible).toEqual([[root, "t"]]);

    expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
    const rows = await db.query("SELECT key FROM store_items WHERE namespace_path LIKE $1", [`${root}%`]);
    expect(rows).toEqual([{ key: "forever" }]);
  });

  it("refreshes ttl on search and starts a new item when an expired key is written again", async () => {
    await store.put([root], "k", { v: 1 }, undefined, { ttl: 2 });
    tick(1.5 * MINUTE);
    expect(await store.search([root])).toHaveLength(1); // refreshOnRead defaults to true
    tick(1.5 * MINUTE);
    expect(await store.search([root], { refreshTtl: false })).toHaveLength(1);
    tick(1 * MINUTE);
    expect(await store.search([root])).toHaveLength(0);
    await store.put([root], "k", { v: 2 });
    const again = await store.get([root], "k");
    expect(again!.createdAt.getTime()).toBe(clock.getTime());
    tick(24 * 60 * MINUTE);
    expect(await store.get([root], "k")).not.toBeNull();
  });

  it("applies a default ttl unless a put says null, and honours refreshOnRead: false", async () => {
    const strict = new SlipwayStore(db, { now: () => clock, ttl: { defaultTtl: 1, refreshOnRead: false } });
    await strict.put([root], "default", { v: 1 });
    await strict.put([root], "never", { v: 2 }, undefined, { ttl: null });
    tick(40_000);
    expect(await strict.get([root], "default")).not.toBeNull();
    tick(40_000);
    expect(await strict.get([root], "default")).toBeNull();
    expect(await strict.get([root], "never")).not.toBeNull();
    await expect(strict.put([root], "bad", { v: 3 }, undefined, { ttl: 0 })).rejects.toThrow(/ttl/);
  });
});
