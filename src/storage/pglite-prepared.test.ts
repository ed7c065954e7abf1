import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/**
 * The embedded database runs repeated statements as prepared statements
 * (pglite-prepared.mjs). Inside a transaction a statement not prepared yet goes PGlite's
 * own way, which gives each test the reference answer to compare with.
 */
describe("prepared statements on the embedded database", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
  });
  afterAll(() => db?.close());

  const SQL = `SELECT $1::int AS i, $2::bigint AS big, $3::numeric AS n, $4::text AS t, $5::jsonb AS j, $6::bool AS b,
    $7::timestamptz AS at, $8::uuid AS id, $9::text[] AS texts, $10::bytea AS bytes, $11::text AS nothing, $12::int[] AS ints`;
  const params = [
    7,
    9007199254740991,
    "1.50",
    'it\'s "quoted"\\ and ünïcode',
    JSON.stringify({ a: [1, "x"], b: null }),
    true,
    new Date("2026-11-26T10:00:00.000Z"),
    "0b5c6f1e-8a4d-4f3e-9c2b-1d2e3f4a5b6c",
    ["a", "b,c", null, 'd"e'],
    Uint8Array.from([0, 1, 255]),
    null,
    [1, 2, 3],
  ];

  it("answers as PGlite's own path does, for every kind of value both ways", async () => {
    const reference = await db.transaction((tx) => tx.query(SQL, params));
    const first = await db.query(SQL, params); // prepares it
    const again = await db.query(SQL, params); // runs it prepared
    expect(first).toEqual(reference);
    expect(again).toEqual(reference);
    expect(again[0].t).toBe(params[3]);
    expect(again[0].texts).toEqual(["a", "b,c", null, 'd"e']);
  });

  it("reports a failed statement with PostgreSQL's code and detail, and runs it again afterwards", async () => {
    await db.query("CREATE TABLE unique_probe (id int PRIMARY KEY)");
    const insert = "INSERT INTO unique_probe (id) VALUES ($1) RETURNING id";
    expect(await db.query(insert, [1])).toEqual([{ id: 1 }]);
    await expect(db.query(insert, [1])).rejects.toMatchObject({ code: "23505", detail: expect.stringContaining("(id)=(1)") });
    expect(await db.query(insert, [2])).toEqual([{ id: 2 }]);
  });

  it("follows a table that changed shape after the statement was prepared", async () => {
    await db.query("CREATE TABLE shape_probe (a int)");
    await db.query("INSERT INTO shape_probe VALUES (1)");
    const select = "SELECT * FROM shape_probe WHERE a = $1";
    expect(await db.query(select, [1])).toEqual([{ a: 1 }]);
    await db.query("ALTER TABLE shape_probe ADD COLUMN b text DEFAULT 'x'");
    expect(await db.query(select, [1])).toEqual([{ a: 1, b: "x" }]);
    expect(await db.query(select, [1])).toEqual([{ a: 1, b: "x" }]);
  });

  it("waits for an open transaction instead of running inside it", async () => {
    await db.query("CREATE TABLE tx_probe (id int)");
    const count = "SELECT count(*)::int AS n FROM tx_probe WHERE id > $1";
    expect(await db.query(count, [0])).toEqual([{ n: 0 }]);
    let outside: Promise<unknown> | undefined;
    await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO tx_probe VALUES (1)");
        outside = db.query(count, [0]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error("roll back");
      })
      .catch(() => undefined);
    // Run inside the transaction it would have counted the row that was rolled back.
    expect(await outside).toEqual([{ n: 0 }]);
  });

  it("delivers a NOTIFY sent by a prepared statement", async () => {
    const heard = new Promise<string>((resolve) => void db.listen("prepared_probe", resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const notify = "SELECT pg_notify($1, $2)";
    await db.query(notify, ["other_channel", "x"]);
    await db.query(notify, ["prepared_probe", "hello"]);
    expect(await heard).toBe("hello");
  });

  it("keeps the statements used most recently when more are sent than it keeps", async () => {
    const select = (n: number) => `SELECT ${n} + $1::int AS v`;
    for (let round = 0; round < 2; round++) {
      // 600 different texts against a cache of 500: the oldest are closed and prepared again later.
      for (let n = 0; n < 600; n++) expect(await db.query(select(n), [1])).toEqual([{ v: n + 1 }]);
    }
    const [held] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements");
    expect(held.n).toBeGreaterThan(400);
    expect(held.n).toBeLessThanOrEqual(500);
  });

  it("prepares a statement once its table exists, having failed before it did", async () => {
    const select = "SELECT count(*)::int AS n FROM later_probe WHERE id > $1";
    await expect(db.query(select, [0])).rejects.toMatchObject({ code: "42P01" });
    await db.query("CREATE TABLE later_probe (id int)");
    expect(await db.query(select, [0])).toEqual([{ n: 0 }]);
    const held = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1", [select]);
    expect(held).toEqual([{ n: 1 }]);
  });
});
