import { fsyncSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterEach, describe, expect, it } from "vitest";
import { DURABLE_START, DurableNodeFS, embeddedFsync } from "./pglite-durable-fs.mjs";
import { openPglite } from "./pglite.ts";

/** Decision 0050: a commit on the embedded database is on the disk before it is answered. */
describe("the embedded database's durability", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function dataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "slipway-durable-"));
    dirs.push(dir);
    return join(dir, "db");
  }

  it("flushes the WAL to the disk at each commit (PGlite's own filesystem never does)", async () => {
    let syncs = 0;
    const pg = new PGlite({ fs: new DurableNodeFS(dataDir(), (fd) => (syncs++, fsyncSync(fd))) as never, startParams: DURABLE_START });
    await pg.waitReady;
    await pg.exec("CREATE TABLE t (n int)");
    const before = syncs;
    for (let n = 0; n < 5; n++) await pg.query("INSERT INTO t VALUES ($1)", [n]);
    expect(syncs - before).toBeGreaterThanOrEqual(5);
    await pg.exec("CHECKPOINT");
    await pg.close();
  });

  it("opens with fsync on, unless the operator turns it off for throwaway data", async () => {
    const durable = await openPglite(dataDir(), "probe", { template: "" });
    expect(await durable.query("SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method")).toEqual([{ fsync: "on", method: "fsync" }]);
    await durable.close();
    expect(embeddedFsync({})).toBe(true);
    expect(embeddedFsync({ SLIPWAY_EMBEDDED_FSYNC: "off" })).toBe(false);
  });
});
