import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./open.ts";
import { dataDirTemplate, openPglite } from "./pglite.ts";

/**
 * A data directory's first embedded database (the control plane's) writes the empty
 * cluster that every later one there (each deployment's) unpacks: initdb runs once.
 */
describe("a data directory's empty cluster", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "slipway-data-dir-template-"));
  const given = process.env.SLIPWAY_PGLITE_TEMPLATE;
  delete process.env.SLIPWAY_PGLITE_TEMPLATE;
  afterAll(() => {
    if (given !== undefined) process.env.SLIPWAY_PGLITE_TEMPLATE = given;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const cluster = join(dataDir, "cache", "pglite-cluster-2.tar");

  it("is written by the control database's creation and reused by a deployment's", async () => {
    const control = await openDatabase({
      dataDir: join(dataDir, "control-db"),
      pgliteTemplate: () => dataDirTemplate(dataDir),
      schema: "slipway_control",
      component: "control",
    });
    await control.close();
    expect(existsSync(cluster)).toBe(true);
    const written = statSync(cluster).mtimeMs;

    const deployment = await openPglite(join(dataDir, "deployments", "d1", "db"), "slipway_agent", {
      template: () => dataDirTemplate(dataDir),
      upkeepEveryMs: 0,
    });
    expect(await deployment.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await deployment.close();
    expect(statSync(cluster).mtimeMs).toBe(written);
    expect(readdirSync(join(dataDir, "cache"))).toEqual(["pglite-cluster-2.tar"]);
  });

  it("is written again when the file was removed since", async () => {
    rmSync(cluster);
    expect(await dataDirTemplate(dataDir)).toBe(cluster);
    expect(existsSync(cluster)).toBe(true);
  });
});
