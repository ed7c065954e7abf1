import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { AssistantService } from "./service.ts";
import { ALL_GRAPHS, startAssistantServer, type AssistantTestServer } from "./testing.ts";

// uuid5(graph_id, 6ba7b821-9dad-11d1-80b4-00c04fd430c8), computed independently (Python's uuid module).
const SYSTEM_IDS: Record<string, string> = {
  agent: "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
  nested: "0813419b-f0e6-579e-bdee-18d9fdf48632",
  factory: "7f7e503e-a375-52fe-bcf4-0893f0e102e6",
};

describe.each(BACKENDS)("assistants through the SDK on %s", (backend) => {
  let server: AssistantTestServer;
  beforeAll(async () => {
    server = await startAssistantServer(backend);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("has one system assistant per graph, with the vendor's uuid5 ids", async () => {
    const system = await server.client.assistants.search({ metadata: { created_by: "system" }, limit: 100 });
    expect(system.map((a) => a.graph_id).sort()).toEqual([...ALL_GRAPHS].sort());
    for (const assistant of system) {
      expect(assistant.name).toBe(assistant.graph_id);
      expect(assistant.version).toBe(1);
    }
    for (const [graphId, id] of Object.entries(SYSTEM_IDS)) {
      expect(system.find((a) => a.graph_id === graphId)?.assistant_id).toBe(id);
    }
  });

  it("accepts a graph id wherever an assistant id goes", async () => {
    const byGraph = await server.client.assistants.get("agent");
    const byId = await server.client.assistants.get(SYSTEM_IDS.agent!);
    expect(byGraph).toEqual(byId);
    expect(byGraph.metadata).toEqual({ created_by: "system" });
    const patched = await server.client.assistants.update("approval", { metadata: { team: "ops" } });
    expect(patched.version).toBe(2);
    expect(patched.metadata).toEqual({ created_by: "system", team: "ops" });
    const versions = await server.client.assistants.getVersions("approval");
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
  });

  it("makes system assistants once, across restarts and concurrent starts", async () => {
    const before = await server.client.assistants.count({ metadata: { created_by: "system" } });
    const restarted = new AssistantService({ db: server.db, graphs: server.graphs });
    await Promise.all([restarted.ensureSystemAssistants(), server.assistants.ensureSystemAssistants()]);
    expect(await server.client.assistants.count({ metadata: { created_by: "system" } })).toBe(before);
    const rows = await server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM assistant_versions WHERE assistant_id = $1", [SYSTEM_IDS.nested]);
    expect(rows[0]!.n).toBe(1);
  });

  it("creates with defaults and with every field", async () => {
    const plain = await server.client.assistants.create({ graphId: "agent" });
    expect(plain).toMatchObject({ graph_id: "agent", name: "Untitled", description: null, config: {}, context: {}, metadata: {}, version: 1 });
    expect(plain.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(plain.created_at).toBe(plain.updated_at);
    expect(await server.client.assistants.get(plain.assistant_id)).toEqual(plain);

    const full = await server.client.assistants.create({
      graphId: "factory",
      assistantId: "5b3f0d4e-8a61-4d7e-9c1e-0a2b3c4d5e6f",
      name: "Replier",
      description: "says hi",
      config: { configurable: { reply: "hi" }, tags: ["t"], recursion_limit: 7 },
      context: { tone: "dry" },
      metadata: { owner: "ana" },
    });
    expect(full).toMatchObject({
      assistant_id: "5b3f0d4e-8a61-4d7e-9c1e-0a2b3c4d5e6f",
      name: "Replier",
      description: "says hi",
      config: { configurable: { reply: "hi" }, tags: ["t"], recursion_limit: 7 },
      context: { tone: "dry" },
      metadata: { owner: "ana" },
    });
    const again = await server.client.assistants.create({ graphId: "agent", assistantId: full.assistant_id, name: "Other", ifExists: "do_nothing" });
    expect(again).toEqual(full);
    await expect(server.client.assistants.create({ graphId: "agent", assistantId: full.assistant_id })).rejects.toThrow(/409/);
  });

  it("versions every update and moves between versions", async () => {
    const a = await server.client.assistants.create({ graphId: "agent", name: "v1", config: { configurable: { x: 1 } }, metadata: { keep: 1, tag: "one" } });
    const v2 = await server.client.assistants.update(a.assistant_id, {
      name: "v2",
      config: { configurable: { x: 2 } },
      metadata: { tag: "two" },
      context: { c: 2 },
    });
    expect(v2).toMatchObject({ version: 2, name: "v2", config: { configurable: { x: 2 } }, metadata: { keep: 1, tag: "two" }, context: { c: 2 } });
    expect(v2.created_at).toBe(a.created_at);
    const v3 = await server.client.assistants.update(a.assistant_id, { description: "third", graphId: "slow" });
    expect(v3).toMatchObject({ version: 3, name: "v2", description: "third", graph_id: "slow", config: { configurable: { x: 2 } } });

    const versions = await server.client.assistants.getVersions(a.assistant_id);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[2]).toMatchObject({ name: "v1", graph_id: "agent", metadata: { keep: 1, tag: "one" } });
    const tagged = await server.client.assistants.getVersions(a.assistant_id, { metadata: { tag: "one" } });
    expect(tagged.map((v) => v.version)).toEqual([1]);
    const paged = await server.client.assistants.getVersions(a.assistant_id, { limit: 1, offset: 1 });
    expect(paged.map((v) => v.version)).toEqual([2]);

    const back = await server.client.assistants.setLatest(a.assistant_id, 1);
    expect(back).toMatchObject({ version: 1, name: "v1", graph_id: "agent", config: { configurable: { x: 1 } }, metadata: { keep: 1, tag: "one" } });
    expect((await server.client.assistants.get(a.assistant_id)).version).toBe(1);
    // The next update goes above the highest version, not above the current one.
    const v4 = await server.client.assistants.update(a.assistant_id, { name: "v4" });
    expect(v4).toMatchObject({ version: 4, name: "v4", config: { configurable: { x: 1 } } });
  });

  it("searches by metadata, graph, name; sorts, pages and selects", async () => {
    const run = `search-${backend}`;
    const made = [];
    for (const [name, graphId] of [
      ["alpha 100%", "agent"],
      ["beta", "slow"],
      ["gamma", "agent"],
    ] as const) {
      made.push(await server.client.assistants.create({ graphId, name, metadata: { run, graphId } }));
    }
    const all = await server.client.assistants.search({ metadata: { run } });
    expect(all.map((a) => a.name)).toEqual(["gamma", "beta", "alpha 100%"]);
    const byGraph = await server.client.assistants.search({ metadata: { run }, graphId: "agent" });
    expect(byGraph.map((a) => a.name)).toEqual(["gamma", "alpha 100%"]);
    expect((await server.client.assistants.search({ metadata: { run }, name: "ALPHA" })).map((a) => a.name)).toEqual(["alpha 100%"]);
    expect((await server.client.assistants.search({ metadata: { run }, name: "0%" })).map((a) => a.name)).toEqual(["alpha 100%"]);
    // % and _ are taken literally: unescaped, both would match "alpha 100%".
    expect(await server.client.assistants.search({ metadata: { run }, name: "a_p" })).toEqual([]);
    expect(await server.client.assistants.search({ metadata: { run }, name: "a%1" })).toEqual([]);
    const sorted = await server.client.assistants.search({ metadata: { run }, sortBy: "name", sortOrder: "asc" });
    expect(sorted.map((a) => a.name)).toEqual(["alpha 100%", "beta", "gamma"]);

    const first = await server.client.assistants.search({ metadata: { run }, limit: 2, includePagination: true });
    expect(first.assistants).toHaveLength(2);
    expect(first.next).toBe("2");
    const last = await server.client.assistants.search({ metadata: { run }, limit: 2, offset: 2, includePagination: true });
    expect(last.assistants.map((a) => a.name)).toEqual(["alpha 100%"]);
    expect(last.next).toBeNull();

    const picked = await server.client.assistants.search({ metadata: { run }, select: ["assistant_id", "name"], limit: 1 });
    expect(picked).toEqual([{ assistant_id: made[2]!.assistant_id, name: "gamma" }]);

    expect(await server.client.assistants.count({ metadata: { run } })).toBe(3);
    expect(await server.client.assistants.count({ metadata: { run }, graphId: "slow" })).toBe(1);
    expect(await server.client.assistants.count({ metadata: { run }, name: "a" })).toBe(3);
  });

  it("deletes an assistant with all its versions", async () => {
    const a = await server.client.assistants.create({ graphId: "agent" });
    await server.client.assistants.update(a.assistant_id, { name: "two" });
    await server.client.assistants.delete(a.assistant_id);
    await expect(server.client.assistants.get(a.assistant_id)).rejects.toThrow(/404/);
    const rows = await server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM assistant_versions WHERE assistant_id = $1", [a.assistant_id]);
    expect(rows[0]!.n).toBe(0);
    await expect(server.client.assistants.delete(a.assistant_id)).rejects.toThrow(/404/);
  });
});

describe("assistants kept in memory on a database of the process's own", () => {
  let server: AssistantTestServer;
  beforeAll(async () => {
    server = await startAssistantServer("pglite");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers reads from memory, hands out copies, and forgets on every write it makes", async () => {
    const assistants = server.assistants;
    const created = await assistants.create({ graph_id: "approval", name: "one" });
    const id = created.assistant_id;
    await assistants.get(id);
    // Written behind the service's back: not seen, so the answer came from memory.
    await server.db.query("UPDATE assistants SET name = 'behind' WHERE assistant_id = $1", [id]);
    expect((await assistants.get(id)).name).toBe("one");

    const copy = await assistants.get(id);
    copy.name = "changed by a caller";
    expect((await assistants.get(id)).name).toBe("one");

    await assistants.patch(id, { name: "two" });
    expect((await assistants.get(id)).name).toBe("two");
    await assistants.setLatest(id, 1);
    expect((await assistants.get(id)).name).toBe("one");
    await assistants.delete(id);
    await expect(assistants.get(id)).rejects.toThrow(/not found/);
  });
});
