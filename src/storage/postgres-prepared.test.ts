import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/** Statements go to PostgreSQL as named prepared statements (postgres.ts runPrepared). */
describe("prepared statements on PostgreSQL", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("postgres"), component: "agent", poolSize: 2 });
  });
  afterAll(() => db?.close());

  it("prepares a repeated statement under a name of its own, outside transactions", async () => {
    const single = await openDatabase({ ...freshBackend("postgres"), component: "agent", poolSize: 1 });
    try {
      const sql = "SELECT $1::int + 1 AS v, current_setting('search_path') AS path";
      const inTransaction = "SELECT $1::int * 2 AS v";
      for (let i = 0; i < 3; i++) expect((await single.query<{ v: number }>(sql, [i]))[0].v).toBe(i + 1);
      expect(await single.transaction((tx) => tx.query(inTransaction, [2]))).toEqual([{ v: 4 }]);
      // One connection: what it holds prepared is what this pool prepared.
      const held = await single.transaction((tx) => tx.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements"));
      expect(held.map((h) => h.statement)).toContain(sql);
      expect(held.find((h) => h.statement === sql)?.name).toMatch(/^slipway_[0-9a-f]{20}$/);
      // A statement that failed as prepared inside a transaction would abort it: there they go unnamed.
      expect(held.map((h) => h.statement)).not.toContain(inTransaction);
    } finally {
      await single.close();
    }
  });

  it("follows a table that changed shape after the statement was prepared, on every connection", async () => {
    await db.query("CREATE TABLE shape_probe (a int)");
    await db.query("INSERT INTO shape_probe VALUES (1)");
    const select = "SELECT * FROM shape_probe WHERE a = $1";
    for (let i = 0; i < 4; i++) expect(await db.query(select, [1])).toEqual([{ a: 1 }]);
    await db.query("ALTER TABLE shape_probe ADD COLUMN b text DEFAULT 'x'");
    for (let i = 0; i < 4; i++) expect(await db.query(select, [1])).toEqual([{ a: 1, b: "x" }]);
  });

  // Last: it turns names off for the rest of this process.
  it("goes unnamed for good once the server lost a prepared statement, as behind a pooler", async () => {
    const single = await openDatabase({ ...freshBackend("postgres"), component: "agent", poolSize: 1 });
    try {
      const sql = "SELECT $1::int + 10 AS v";
      expect(await single.query(sql, [1])).toEqual([{ v: 11 }]);
      // What a pooler does when it hands the next statement to another server connection.
      await single.query("DEALLOCATE ALL");
      expect(await single.query(sql, [2])).toEqual([{ v: 12 }]);
      expect(await single.query("SELECT $1::int + 20 AS v", [3])).toEqual([{ v: 23 }]);
      const held = await single.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements");
      expect(held).toEqual([{ n: 0 }]);
    } finally {
      await single.close();
    }
  });
});
