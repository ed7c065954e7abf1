import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PGlite } from "@electric-sql/pglite";
import { PreparedStatements } from "./pglite-prepared.mjs";

/**
 * Two callers of one statement that both find it stale (0A000, 26000) both forget it.
 * The second must not drop the statement a third caller prepared in between: it would
 * stay prepared in PostgreSQL with nothing left to close it.
 */
describe("forgetting a prepared statement on the embedded database", () => {
  let pg: PGlite;
  let prepared: PreparedStatements;
  beforeAll(async () => {
    pg = new PGlite();
    await pg.waitReady;
    prepared = new PreparedStatements(pg);
  });
  afterAll(() => pg?.close());

  const names = async () => (await pg.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name")).rows.map((r) => r.name);

  it("keeps a statement prepared again after the one being forgotten", async () => {
    const SQL = "SELECT $1::int + 1 AS n";
    expect(await prepared.query(SQL, [1])).toEqual([{ n: 2 }]);
    const first = prepared.bySql.get(SQL);
    prepared.forget(SQL, first!); // the first caller that found it stale
    expect(await prepared.query(SQL, [2])).toEqual([{ n: 3 }]); // prepared again
    const second = prepared.bySql.get(SQL);
    expect(second?.name).not.toBe(first?.name);
    prepared.forget(SQL, first!); // the second caller, late
    expect(prepared.bySql.get(SQL)).toBe(second);
    expect(await names()).toEqual([second!.name]);
    expect(await prepared.query(SQL, [3])).toEqual([{ n: 4 }]);
  });
});
