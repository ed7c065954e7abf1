import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/**
 * A statement first sent by many callers at once (a burst of runs after a start) is
 * prepared once on the embedded database: every copy prepared beside it would stay
 * prepared, unnamed in the cache and never closed.
 */
describe("a statement sent by many callers at once, on the embedded database", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
  });
  afterAll(() => db?.close());

  it("is prepared once", async () => {
    const sql = "SELECT $1::int * 2 AS v";
    let sent: Promise<Array<Array<{ v: number }>>> | undefined;
    // They wait together behind an open transaction, as statements do behind a run's.
    await db.transaction(async (tx) => {
      sent = Promise.all(Array.from({ length: 20 }, (_, i) => db.query<{ v: number }>(sql, [i])));
      await tx.query("SELECT pg_sleep(0.05)");
    });
    const answers = await sent!;
    expect(answers.map((rows) => rows[0].v)).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
    const [held] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1", [sql]);
    expect(held.n).toBe(1);
  });
});
