import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/**
 * A statement prepared before its table changed shape (another process migrated it)
 * fails with 0A000 where it runs next. Outside a transaction it is sent again unprepared.
 * Inside one, that failure has already aborted the transaction: it cannot be answered
 * any more (PostgreSQL has no way back short of a savepoint per statement). On the
 * embedded database (one process: only its own migrations change its tables) the
 * transaction fails with the cause, not with 25P02, and the next one runs; on
 * PostgreSQL statements inside transactions are not prepared, so it runs at once.
 */
describe.each(BACKENDS)("a statement prepared before its table changed shape, inside a transaction (%s)", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent", poolSize: 1 });
  });
  afterAll(() => db?.close());

  it("fails that transaction with the cause (0A000) or runs it unprepared, and the next transaction runs it", async () => {
    await db.query("CREATE TABLE tx_shape_probe (a int)");
    await db.query("INSERT INTO tx_shape_probe VALUES (1)");
    const select = "SELECT * FROM tx_shape_probe WHERE a = $1";
    // Prepared (PGlite: outside a transaction; PostgreSQL: on the pool's one connection).
    for (let i = 0; i < 3; i++) expect(await db.query(select, [1])).toEqual([{ a: 1 }]);
    // Another process's migration, as far as this connection knows.
    await db.query("ALTER TABLE tx_shape_probe ADD COLUMN b text DEFAULT 'x'");
    const work = () =>
      db.transaction(async (tx) => {
        const found = await tx.query(select, [1]);
        await tx.query("INSERT INTO tx_shape_probe (a) VALUES (2)");
        return found;
      });
    if (backend === "pglite") await expect(work()).rejects.toMatchObject({ code: "0A000" });
    else expect(await work()).toEqual([{ a: 1, b: "x" }]);
    expect(await work()).toEqual([{ a: 1, b: "x" }]);
    expect(await db.query("SELECT count(*)::int AS n FROM tx_shape_probe")).toEqual([{ n: backend === "pglite" ? 2 : 3 }]);
  });
});
