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

  it("prepares a repeated statement under a name of its own on the connection it runs on", async () => {
    const sql = "SELECT $1::int + 1 AS v, current_setting('search_path') AS path";
    for (let i = 0; i < 5; i++) expect((await db.query<{ v: number }>(sql, [i]))[0].v).toBe(i + 1);
    const named = await db.transaction(async (tx) => {
      await tx.query(sql, [1]);
      return tx.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE statement = $1", [sql]);
    });
    expect(named).toHaveLength(1);
    expect(named[0].name).toMatch(/^slipway_[0-9a-f]{20}$/);
  });

  it("follows a table that changed shape after the statement was prepared, on every connection", async () => {
    await db.query("CREATE TABLE shape_probe (a int)");
    await db.query("INSERT INTO shape_probe VALUES (1)");
    const select = "SELECT * FROM shape_probe WHERE a = $1";
    for (let i = 0; i < 4; i++) expect(await db.query(select, [1])).toEqual([{ a: 1 }]);
    await db.query("ALTER TABLE shape_probe ADD COLUMN b text DEFAULT 'x'");
    for (let i = 0; i < 4; i++) expect(await db.query(select, [1])).toEqual([{ a: 1, b: "x" }]);
  });
});
