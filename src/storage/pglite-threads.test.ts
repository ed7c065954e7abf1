import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { openPglite, type PgliteDatabase } from "./pglite.ts";
import { databasesPerThread, sharedThreadSizes, sharedThreadsNow } from "./pglite-threads.ts";

/**
 * Deployments' embedded databases share threads, a few to each (decision 0057): each
 * keeps its own PGlite (WebAssembly memory, file system), so nothing of one reaches
 * another, and a thread ends with its last database.
 */
describe("deployment databases on shared threads", () => {
  const parent = mkdtempSync(join(tmpdir(), "slipway-threads-"));
  const before = process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD;
  const opened: PgliteDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((db) => db.close()));
    if (before === undefined) delete process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD;
    else process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = before;
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  const open = async (dir: string, shareThread = true) => {
    const db = await openPglite(join(parent, dir), "slipway_agent", { template: inject("pgliteTemplate"), upkeepEveryMs: 0, shareThread });
    opened.push(db);
    return db;
  };

  it("places three databases two to a thread, keeps their data apart, and ends each thread with its last database", async () => {
    process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = "2";
    // Opened at once: each place is taken as the open begins, so they cannot pile on one thread.
    const [a, b, c] = await Promise.all([open("a"), open("b"), open("c")]);
    expect(sharedThreadSizes().sort()).toEqual([1, 2]);

    await a.query("CREATE TABLE only_in_a (n int)");
    await a.query("INSERT INTO only_in_a VALUES (1)");
    for (const other of [b, c]) {
      const [{ found }] = await other.query<{ found: string | null }>("SELECT to_regclass('only_in_a')::text AS found");
      expect(found).toBeNull();
    }
    // Each database's own statements and transactions go on while a neighbour works.
    await Promise.all([
      a.transaction(async (tx) => tx.query("INSERT INTO only_in_a SELECT generate_series(2, 2000)")),
      b.query("CREATE TABLE only_in_b AS SELECT generate_series(1, 10) AS n"),
    ]);
    expect(await a.query<{ n: number }>("SELECT count(*)::int AS n FROM only_in_a")).toEqual([{ n: 2000 }]);
    expect(await b.query<{ n: number }>("SELECT count(*)::int AS n FROM only_in_b")).toEqual([{ n: 10 }]);

    // Closing one leaves its neighbours answering, and frees its place for the next.
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    expect(sharedThreadSizes().reduce((sum, n) => sum + n, 0)).toBe(2);
    expect(await b.query<{ n: number }>("SELECT count(*)::int AS n FROM only_in_b")).toEqual([{ n: 10 }]);
    expect(await c.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    const again = await open("a");
    expect(await again.query<{ n: number }>("SELECT count(*)::int AS n FROM only_in_a")).toEqual([{ n: 2000 }]);
    expect(sharedThreadSizes().sort()).toEqual([1, 2]);

    await Promise.all(opened.splice(0).map((db) => db.close()));
    expect(sharedThreadSizes()).toEqual([]);
  });

  it("fails every database of a thread that dies, clearly, and opens the next on a new thread", async () => {
    process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = "2";
    const [a, b] = await Promise.all([open("dies-a"), open("dies-b")]);
    await a.query("CREATE TABLE kept (n int)");
    const [thread] = sharedThreadsNow();
    // A statement in flight when the thread goes fails too, not only those after.
    const inFlight = b.query("SELECT count(*) FROM generate_series(1, 2000000)");
    await thread.stop();
    for (const db of [a, b]) await expect(db.query("SELECT 1")).rejects.toThrow(/the embedded database thread stopped/);
    await expect(inFlight).rejects.toThrow(/the embedded database thread stopped/);
    expect(sharedThreadSizes()).toEqual([]);
    // Closing them is quiet; the data is on disk and opens again on a new thread.
    await Promise.all(opened.splice(0).map((db) => db.close()));
    const again = await open("dies-a");
    expect(await again.query("SELECT to_regclass('kept')::text AS found")).toEqual([{ found: "kept" }]);
    expect(sharedThreadSizes()).toEqual([1]);
  });

  it("shares PGlite's read-only package files between a thread's databases; one that rewrites a file changes only its own", async () => {
    process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = "2";
    const a = await open("package-a");
    const alone = (await a.threadMemory()).arrayBuffers;
    const b = await open("package-b");
    expect(sharedThreadSizes()).toEqual([2]);
    // The package is 6 MB: a second database holding a copy of its own would add that much.
    expect((await b.threadMemory()).arrayBuffers - alone).toBeLessThan(4 * 1024 * 1024);

    const zone = "/pglite/share/postgresql/timezone/UTC";
    const header = async (db: PgliteDatabase) => {
      const [{ bytes }] = await db.query<{ bytes: Uint8Array }>(`SELECT pg_read_binary_file('${zone}', 0, 4) AS bytes`);
      return Buffer.from(bytes).toString("latin1");
    };
    expect(await header(b)).toBe("TZif");
    // A superuser statement can write there (COPY TO truncates the file and writes anew):
    // the neighbour's file system still reads the package's bytes.
    await a.query(`COPY (SELECT 'garbage') TO '${zone}'`);
    expect(await header(a)).toBe("garb");
    expect(await header(b)).toBe("TZif");
    expect(await b.query("SELECT set_config('timezone', 'UTC', false) AS zone")).toEqual([{ zone: "UTC" }]);

    // One backend: the shared tables are sized for five connections, not PostgreSQL's 100.
    expect(await b.query("SHOW max_connections")).toEqual([{ max_connections: "5" }]);
  });

  it("gives a database opened without shareThread (the control plane's own) a thread of its own", async () => {
    process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = "4";
    await open("shared");
    await open("own", false);
    expect(sharedThreadSizes()).toEqual([1]);
  });

  it("with 1, gives each deployment database a thread of its own, as before", async () => {
    process.env.SLIPWAY_PGLITE_DATABASES_PER_THREAD = "1";
    await Promise.all([open("one-1"), open("one-2")]);
    expect(sharedThreadSizes()).toEqual([]);
  });

  it("refuses a count that is not a whole number from 1 to 64, by name", () => {
    for (const value of ["0", "65", "-1", "2.5", "four", "100"]) {
      expect(() => databasesPerThread({ SLIPWAY_PGLITE_DATABASES_PER_THREAD: value }), value).toThrow(
        /SLIPWAY_PGLITE_DATABASES_PER_THREAD must be a whole number from 1 to 64/,
      );
    }
    expect(databasesPerThread({ SLIPWAY_PGLITE_DATABASES_PER_THREAD: "8" })).toBe(8);
    expect(databasesPerThread({})).toBe(8);
  });
});
