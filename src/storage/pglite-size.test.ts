import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { migrate } from "./migrate.ts";
import { openPglite } from "./pglite.ts";

/** Bytes a directory takes on disk, as `du` counts them (allocated blocks). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? diskBytes(path) : statSync(path).blocks * 512;
  }
  return total;
}

/**
 * Issue 32 asks for an empty deployment's database under 10 MB: it was 39 MB, three
 * copies of the catalogs (template0, template1, postgres) and a 16 MB WAL segment
 * (decision 0046).
 */
describe("an empty deployment's embedded database", () => {
  const parent = mkdtempSync(join(tmpdir(), "slipway-size-"));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it("takes under 10 MiB with the agent's schema, as the control plane makes it from its template, and opens again", async () => {
    const dir = join(parent, "from-template");
    const db = await openPglite(dir, "slipway_agent", { template: inject("pgliteTemplate"), upkeepEveryMs: 0 });
    await migrate(db, "agent");
    expect(await db.query("SELECT datname FROM pg_database")).toEqual([{ datname: "postgres" }]);
    await db.close();
    expect(diskBytes(dir)).toBeLessThan(10 * 1024 * 1024);

    const again = await openPglite(dir, "slipway_agent", { upkeepEveryMs: 0 });
    expect(await again.query<{ n: number }>("SELECT count(*)::int AS n FROM schema_migrations")).not.toEqual([{ n: 0 }]);
    await again.close();
    expect(diskBytes(dir)).toBeLessThan(10 * 1024 * 1024);
  });

  it("is as small when made without a template (slipway agent on its own, the control plane's database)", async () => {
    const dir = join(parent, "no-template");
    const db = await openPglite(dir, "slipway_agent", { template: "", upkeepEveryMs: 0 });
    await migrate(db, "agent");
    await db.close();
    expect(diskBytes(dir)).toBeLessThan(10 * 1024 * 1024);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`slipway-new-cluster-${process.pid}-`))).toEqual([]);
  });
});
