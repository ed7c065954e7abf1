import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import type { EmbeddingsLike } from "./embeddings.ts";
import { SlipwayStore } from "./store.ts";
import { detectVectorSupport } from "./repository.ts";

/** Three axes, one per topic word: similarity is exactly how much two texts share a topic. */
const TOPICS = ["cat", "budget", "garden"];
const embeddings: EmbeddingsLike = {
  embedDocuments: async (texts) => texts.map(vectorOf),
  embedQuery: async (text) => vectorOf(text),
};
function vectorOf(text: string): number[] {
  const words = text.toLowerCase().split(/\W+/);
  return TOPICS.map((topic) => words.filter((w) => w === topic).length);
}

describe.each(BACKENDS)("semantic store search on %s", (backend) => {
  let db: Database;
  let store: SlipwayStore;
  let root: string;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
  });
  afterAll(async () => db?.close());
  beforeEach(async () => {
    store = new SlipwayStore(db, { index: { dims: 3, fields: ["text"], embeddings, support: await detectVectorSupport(db) } });
    root = `r${randomBytes(4).toString("hex")}`;
  });

  const keys = async (query: string, options: Record<string, unknown> = {}) => (await store.search([root], { query, ...options })).map((item) => item.key);

  it("ranks items by similarity to the query, with a score", async () => {
    await store.put([root], "pets", { text: "cat cat" });
    await store.put([root], "money", { text: "budget" });
    await store.put([root], "mixed", { text: "cat budget" });
    expect(await keys("cat")).toEqual(["pets", "mixed", "money"]);
    expect(await keys("budget")).toEqual(["money", "mixed", "pets"]);
    const [best] = await store.search([root], { query: "cat" });
    expect(best!.score).toBeCloseTo(1, 5);
  });

  it("re-embeds an overwritten value, and leaves unindexed items last without a score", async () => {
    await store.put([root], "a", { text: "cat" });
    await store.put([root], "b", { text: "garden" });
    await store.put([root], "plain", { text: "cat cat cat" }, false);
    expect(await keys("cat")).toEqual(["a", "b", "plain"]);
    await store.put([root], "a", { text: "garden" });
    await store.put([root], "b", { text: "cat" });
    const found = await store.search([root], { query: "cat" });
    expect(found.map((item) => item.key)).toEqual(["b", "a", "plain"]);
    expect(found[2]!.score).toBeUndefined();
    await store.delete([root], "b");
    const left = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM store_vectors WHERE namespace_path LIKE $1", [`${root}%`]);
    expect(left[0]!.n).toBe(1);
  });

  it("embeds the fields a put names instead of the configured ones", async () => {
    await store.put([root], "title", { text: "budget", title: "cat" }, ["title"]);
    await store.put([root], "text", { text: "cat", title: "budget" });
    // Both score 1 for "cat": each was embedded on the field that says "cat".
    const found = await store.search([root], { query: "cat" });
    expect(found.map((item) => item.score)).toEqual([expect.closeTo(1, 5), expect.closeTo(1, 5)]);
    expect((await store.search([root], { query: "budget" })).map((item) => item.score ?? 0)).toEqual([0, 0]);
  });

  it("applies custom auth's filters and a value filter to a semantic search", async () => {
    await store.put([root], "mine", { text: "cat", owner: "alice" });
    await store.put([root], "theirs", { text: "cat cat", owner: "bob" });
    expect(await keys("cat", { authFilter: { owner: "alice" } })).toEqual(["mine"]);
    expect(await keys("cat", { filter: { owner: "bob" } })).toEqual(["theirs"]);
  });

  it("refuses a model whose vectors do not have the configured dimensions", async () => {
    const wrong = new SlipwayStore(db, { index: { dims: 4, fields: ["text"], embeddings, support: { kind: "sql" } } });
    await expect(wrong.put([root], "k", { text: "cat" })).rejects.toThrow(/3 dimensions; store.index.dims says 4/);
    expect(await store.get([root], "k")).toBeNull();
  });
});
