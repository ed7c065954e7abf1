import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openPglite } from "./pglite.ts";

/**
 * A new data directory without a template runs initdb on a thread that then ends (it
 * leaves its thread holding about twice the memory a started database needs); the
 * database is then opened from the cluster it wrote, as at any later start.
 */
describe("an embedded database in a new directory, without a template", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("is created, opened, and keeps what was written across a restart", async () => {
    const parent = mkdtempSync(join(tmpdir(), "slipway-fresh-"));
    dirs.push(parent);
    const dir = join(parent, "db");
    const first = await openPglite(dir, "probe", { template: "" });
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(true);
    await first.query("CREATE TABLE kept (n int)");
    await first.query("INSERT INTO kept VALUES (42)");
    await first.close();

    const again = await openPglite(dir, "probe", { template: "" });
    expect(await again.query<{ n: number }>("SELECT n FROM kept")).toEqual([{ n: 42 }]);
    await again.close();
  });
});
