import { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { planUpkeep, runUpkeep } from "./pglite-upkeep.mjs";

/** A table that nothing is due for, changed field by field below. */
const quiet = { name: "s.t", dead: 0, inserted: 0, modified: 0, tuples: 10_000, xid_age: 1_000, pages: 100, frozen_pages: 0, toast: false };
const plan = (table: Partial<typeof quiet>, settings: Array<{ name: string; value: number }> = []) => planUpkeep([{ ...quiet, ...table }], settings);

describe("which tables the embedded database's upkeep vacuums (autovacuum's rules)", () => {
  it("leaves a table alone below every threshold", () => {
    // dead limit 50 + 0.2 × 10,000 = 2,050; inserts 1,000 + 2,000 = 3,000; analyze 50 + 1,000 = 1,050
    expect(plan({ dead: 2_050, inserted: 3_000, modified: 1_050 })).toEqual([]);
  });

  it("vacuums past the dead rows' threshold, and analyzes too when the changes pass theirs", () => {
    expect(plan({ dead: 2_051 })).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "2051 dead rows" }]);
    expect(plan({ dead: 2_051, modified: 1_051 })).toEqual([{ sql: "VACUUM (ANALYZE) s.t", table: "s.t", why: "2051 dead rows, 1051 rows changed" }]);
  });

  it("vacuums an insert-only table past the inserts' threshold, unless that threshold is -1", () => {
    expect(plan({ inserted: 3_001 })).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "3001 rows inserted" }]);
    expect(plan({ inserted: 3_001 }, [{ name: "autovacuum_vacuum_insert_threshold", value: -1 }])).toEqual([]);
  });

  it("counts only the unfrozen part of the table toward the inserts' threshold (PostgreSQL 18)", () => {
    // 90 of 100 pages all-frozen: 1,000 + 0.2 × 10,000 × 0.1 = 1,200
    expect(plan({ inserted: 1_201, frozen_pages: 90 })).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "1201 rows inserted" }]);
    expect(plan({ inserted: 1_200, frozen_pages: 90 })).toEqual([]);
    // more all-frozen pages than pages (the counts are estimates): nothing unfrozen
    expect(plan({ inserted: 1_001, frozen_pages: 120 })).toHaveLength(1);
  });

  it("never analyzes a TOAST table, as autovacuum does not (ANALYZE skips them, so their count never resets)", () => {
    expect(plan({ toast: true, modified: 5_000 })).toEqual([]);
    expect(plan({ toast: true, dead: 5_000, modified: 5_000 })).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "5000 dead rows" }]);
  });

  it("analyzes alone when only the changes since the last analyze pass their threshold", () => {
    expect(plan({ modified: 1_051 })).toEqual([{ sql: "ANALYZE s.t", table: "s.t", why: "1051 rows changed" }]);
  });

  it("vacuums a table whose oldest unfrozen transaction ID passes autovacuum_freeze_max_age, however quiet", () => {
    expect(plan({ xid_age: 200_000_001 })).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "transaction IDs 200000001 old" }]);
    expect(plan({ xid_age: 200_000_001 }, [{ name: "autovacuum_freeze_max_age", value: 300_000_000 }])).toEqual([]);
  });

  it("caps the dead rows' threshold at autovacuum_vacuum_max_threshold, and takes the server's settings over the defaults", () => {
    const big = { tuples: 1_000_000_000, dead: 100_000_001 };
    expect(plan(big)).toHaveLength(1); // 0.2 × 10⁹ would wait for 200 million dead rows
    expect(plan(big, [{ name: "autovacuum_vacuum_max_threshold", value: -1 }])).toEqual([]);
    expect(plan({ dead: 100 }, [{ name: "autovacuum_vacuum_scale_factor", value: 0 }])).toEqual([{ sql: "VACUUM s.t", table: "s.t", why: "100 dead rows" }]);
  });

  it("plans each table on its own, in the order given", () => {
    const steps = planUpkeep(
      [
        { ...quiet, name: "s.a", modified: 5_000 },
        { ...quiet, name: "s.b" },
        { ...quiet, name: "s.c", dead: 9_999 },
      ],
      [],
    );
    expect(steps.map((step) => step.sql)).toEqual(["ANALYZE s.a", "VACUUM s.c"]);
  });
});

describe("a pass of the upkeep on a real embedded database", () => {
  it("vacuums a TOAST table that is due and does not analyze it on every later pass", async () => {
    const pg = new PGlite();
    try {
      // Values past 2 kB go to the table's TOAST table; updating and deleting them leaves dead rows there.
      await pg.exec(`CREATE TABLE docs (id int PRIMARY KEY, body text);
        INSERT INTO docs SELECT g, (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 100) i) FROM generate_series(1, 300) g;`);
      await pg.exec("UPDATE docs SET body = body || 'x'");
      await pg.exec("DELETE FROM docs");
      await pg.exec("SELECT pg_stat_force_next_flush()");
      await pg.exec("SELECT 1");
      const first = await runUpkeep(pg);
      await pg.exec("SELECT pg_stat_force_next_flush()");
      await pg.exec("SELECT 1");
      const second = await runUpkeep(pg);
      const toastSteps = (pass: typeof first) => pass.done.filter((step) => step.table.startsWith("pg_toast.")).map((step) => step.sql.replace(/_\d+$/, "_N"));
      expect(toastSteps(first)).toEqual(["VACUUM pg_toast.pg_toast_N"]);
      expect(toastSteps(second)).toEqual([]);
      expect(first.failed).toEqual([]);
    } finally {
      await pg.close();
    }
  });

  it("reports the oldest of the databases it cannot vacuum, whose age only grows", async () => {
    const pg = new PGlite();
    try {
      const before = (await runUpkeep(pg)).oldestOther;
      expect(["template0", "template1"]).toContain(before?.name);
      for (let i = 0; i < 20; i++) await pg.exec("CREATE TEMP TABLE IF NOT EXISTS t (n int); INSERT INTO t VALUES (1);");
      const after = (await runUpkeep(pg)).oldestOther;
      expect(after!.xidAge).toBeGreaterThanOrEqual(before!.xidAge + 20);
    } finally {
      await pg.close();
    }
  });

  it("goes on to the next table when one fails, and says which failed", async () => {
    const pg = new PGlite();
    try {
      for (const name of ["a_notes", "b_notes"]) {
        await pg.exec(`CREATE TABLE ${name} (id int PRIMARY KEY, n int); INSERT INTO ${name} SELECT i, i FROM generate_series(1, 2000) i;`);
      }
      await pg.exec("SELECT pg_stat_force_next_flush()"); // the inserts' counts, at the next statement's end
      await pg.exec("SELECT 1");
      // b_notes is dropped after the statistics were read, as a concurrent DROP would.
      let dropped = false;
      const racing = {
        query: (sql: string) => pg.query(sql),
        exec: async (sql: string) => {
          if (!dropped) {
            dropped = true;
            await pg.exec("DROP TABLE b_notes");
          }
          return pg.exec(sql);
        },
      };
      const { done, failed } = await runUpkeep(racing);
      expect(done.map((step) => step.table)).toContain("public.a_notes");
      expect(failed.map((step) => step.table)).toEqual(["public.b_notes"]);
      expect(String((failed[0].error as Error).message)).toMatch(/does not exist/);
    } finally {
      await pg.close();
    }
  });
});
