import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/**
 * Statements outside transactions that reach the embedded database's thread together
 * run as one call and one commit (pglite-thread.mjs, PreparedStatements.queryMany).
 * Callers must not be able to tell, except by the shared transaction.
 */
describe("statements sent together to the embedded database", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
    await db.query("CREATE TABLE together_probe (id int PRIMARY KEY, label text)");
  });
  afterAll(() => db?.close());

  const TXID = "SELECT txid_current()::text AS txid, $1::int AS n";
  const INSERT = "INSERT INTO together_probe (id, label) VALUES ($1, $2) RETURNING id, label";
  const SELECT = "SELECT id FROM together_probe WHERE id >= $1 AND id < $2 ORDER BY id";

  it("share one transaction when prepared, and each gets its own answer", async () => {
    await db.query(TXID, [0]); // prepared from here on
    await db.query(SELECT, [0, 0]);
    const [a, b, none, c] = await Promise.all([db.query(TXID, [1]), db.query(TXID, [2]), db.query(SELECT, [-5, -1]), db.query(TXID, [3])]);
    expect([a, b, c].map((rows) => rows[0].n)).toEqual([1, 2, 3]);
    expect(none).toEqual([]);
    expect(new Set([a, b, c].map((rows) => rows[0].txid)).size).toBe(1);
    // One at a time, each is its own transaction.
    const [alone] = await db.query(TXID, [4]);
    expect(alone.txid).not.toBe(a[0].txid);
  });

  it("keep every statement but a failing one, which fails alone with PostgreSQL's code", async () => {
    await db.query(INSERT, [100, "first"]);
    const settled = await Promise.allSettled([db.query(INSERT, [101, "a"]), db.query(INSERT, [100, "again"]), db.query(INSERT, [102, "c"])]);
    expect(settled[0]).toEqual({ status: "fulfilled", value: [{ id: 101, label: "a" }] });
    expect(settled[1]).toMatchObject({ status: "rejected", reason: { code: "23505" } });
    expect(settled[2]).toEqual({ status: "fulfilled", value: [{ id: 102, label: "c" }] });
    expect(await db.query(SELECT, [100, 110])).toEqual([{ id: 100 }, { id: 101 }, { id: 102 }]);
    expect(await db.query("SELECT label FROM together_probe WHERE id = $1", [100])).toEqual([{ label: "first" }]);
  });

  it("see each other's writes in the order they were sent", async () => {
    const [inserted, seen] = await Promise.all([db.query(INSERT, [200, "x"]), db.query(SELECT, [200, 201])]);
    expect(inserted).toEqual([{ id: 200, label: "x" }]);
    expect(seen).toEqual([{ id: 200 }]);
  });

  it("wait for a transaction opened after them only if they were sent after it", async () => {
    await db.query("SELECT count(*)::int AS n FROM together_probe WHERE id = $1", [300]);
    const before = db.query(INSERT, [300, "before"]);
    const inside = db.transaction(async (tx) => (await tx.query("SELECT count(*)::int AS n FROM together_probe WHERE id = 300"))[0]);
    expect(await inside).toEqual({ n: 1 });
    expect(await before).toEqual([{ id: 300, label: "before" }]);
  });
});
