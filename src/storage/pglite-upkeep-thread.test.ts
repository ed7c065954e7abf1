import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "./database.ts";
import { openPglite, type UpkeepDone } from "./pglite.ts";

/**
 * The embedded database vacuums what is due on its own thread, between statements, as
 * autovacuum would on a server (decision 0026). Rows updated through a GIN index are
 * never HOT, so their dead versions (and index entries) stay until a VACUUM.
 */
describe("the embedded database's upkeep", () => {
  let db: Database | undefined;
  afterEach(() => db?.close());

  const churn = async (db: Database, rows: number, rounds: number) => {
    await db.query(`CREATE TABLE notes (id int PRIMARY KEY, body jsonb)`);
    await db.query(`CREATE INDEX notes_body ON notes USING gin (body jsonb_path_ops)`);
    await db.query(`INSERT INTO notes SELECT i, jsonb_build_object('n', i) FROM generate_series(1, $1) i`, [rows]);
    for (let round = 1; round <= rounds; round++) await db.query(`UPDATE notes SET body = jsonb_build_object('n', id, 'round', $1::int)`, [round]);
  };
  const stats = async (db: Database) =>
    (
      await db.query<{ dead: number; vacuumed: boolean; analyzed: boolean }>(
        `SELECT n_dead_tup::int AS dead, last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analyzed
       FROM pg_stat_user_tables WHERE relname = 'notes'`,
      )
    )[0];

  it("vacuums and analyzes a table past autovacuum's thresholds, while other statements keep being answered", async () => {
    const passes: UpkeepDone[][] = [];
    db = await openPglite("memory://", "upkeep_a", { upkeepEveryMs: 50, onUpkeep: (done) => passes.push(done) });
    await churn(db, 500, 4);
    // Statements sent meanwhile are answered, each in turn with the upkeep's.
    let answered = 0;
    while (!passes.flat().some((step) => step.table === "upkeep_a.notes" && step.sql.startsWith("VACUUM"))) {
      expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notes`))[0].n).toBe(500);
      answered++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const step = passes.flat().find((s) => s.table === "upkeep_a.notes" && s.sql.startsWith("VACUUM"))!;
    expect(step.sql).toBe("VACUUM (ANALYZE) upkeep_a.notes");
    expect(step.why).toMatch(/^\d+ dead rows, \d+ rows changed$/);
    expect(await stats(db)).toEqual({ dead: 0, vacuumed: true, analyzed: true });
    expect(answered).toBeGreaterThan(0);
  });

  it("does nothing when turned off", async () => {
    const passes: UpkeepDone[][] = [];
    db = await openPglite("memory://", "upkeep_b", { upkeepEveryMs: 0, onUpkeep: (done) => passes.push(done) });
    await churn(db, 500, 4);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(passes).toEqual([]);
    expect(await stats(db)).toMatchObject({ vacuumed: false, analyzed: false });
  });
});
