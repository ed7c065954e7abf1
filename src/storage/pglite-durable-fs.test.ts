import { fsyncSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { DURABLE_START, DurableNodeFS, embeddedFsync } from "./pglite-durable-fs.mjs";
import { openPglite } from "./pglite.ts";

/**
 * Decision 0050: a commit on the embedded database is on the disk before it is answered.
 * One cluster for the file (initdb in WebAssembly takes seconds): made by the first test,
 * opened as Slipway opens it by the second.
 */
describe("the embedded database's durability", () => {
  const root = mkdtempSync(join(tmpdir(), "slipway-durable-"));
  const dataDir = join(root, "db");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("flushes the WAL to the disk at each commit (PGlite's own filesystem never does)", async () => {
    let syncs = 0;
    const pg = new PGlite({
      fs: new DurableNodeFS(dataDir, (fd) => {
        syncs++;
        fsyncSync(fd);
      }) as never,
      startParams: DURABLE_START,
    });
    await pg.waitReady;
    await pg.exec("CREATE TABLE t (n int)");
    const before = syncs;
    for (let n = 0; n < 5; n++) await pg.query("INSERT INTO t VALUES ($1)", [n]);
    expect(syncs - before).toBeGreaterThanOrEqual(5);
    await pg.close();
  }, 180_000);

  it("is opened with fsync on, unless the operator turns it off for throwaway data", async () => {
    // The suite turns fsync off for its throwaway databases (test/support/global-setup.ts): not here.
    const suiteSetting = process.env.SLIPWAY_EMBEDDED_FSYNC;
    delete process.env.SLIPWAY_EMBEDDED_FSYNC;
    const db = await openPglite(dataDir, "probe", { template: "" }).finally(() => {
      if (suiteSetting !== undefined) process.env.SLIPWAY_EMBEDDED_FSYNC = suiteSetting;
    });
    expect(await db.query("SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method")).toEqual([
      { fsync: "on", method: "fsync" },
    ]);
    expect(await db.query("SELECT count(*)::int AS n FROM public.t")).toEqual([{ n: 5 }]);
    await db.close();
    expect(embeddedFsync({})).toBe(true);
    expect(embeddedFsync({ SLIPWAY_EMBEDDED_FSYNC: "off" })).toBe(false);
  }, 120_000);
});
