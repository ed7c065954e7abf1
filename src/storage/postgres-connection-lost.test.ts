import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import { openDatabase } from "./open.ts";

/**
 * A connection cut while a transaction holds it, between two of its statements: the
 * transaction fails, the process goes on, and the pool serves the next statement on a new
 * connection.
 */
describe("a PostgreSQL connection ended in the middle of a transaction", () => {
  const admin = new pg.Client({ connectionString: inject("databaseUrl") });
  afterAll(() => admin.end());

  it("fails that transaction only, and leaves the process and the pool serving", async () => {
    await admin.connect();
    const db = await openDatabase({ ...freshBackend("postgres"), component: "agent", poolSize: 1 });
    const uncaught: Error[] = [];
    const hear = (error: Error) => uncaught.push(error);
    process.on("uncaughtException", hear);
    try {
      const outcome = db.transaction(async (tx) => {
        const [{ pid }] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        // Between two statements: the client is lent out and idle.
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return tx.query("SELECT 1 AS one");
      });
      await expect(outcome).rejects.toThrow(/terminat|Connection/i);
      expect(uncaught).toEqual([]);
      // One connection in the pool: the broken one was destroyed, not given back.
      expect(await db.query("SELECT 2 AS two")).toEqual([{ two: 2 }]);
      expect(await db.transaction((tx) => tx.query("SELECT 3 AS three"))).toEqual([{ three: 3 }]);
    } finally {
      process.off("uncaughtException", hear);
      await db.close();
    }
  });
});
