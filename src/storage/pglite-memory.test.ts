import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { openPglite, sharedBuffersSetting } from "./pglite.ts";

/**
 * Issue 32's memory goals: PGlite makes its whole buffer cache resident as it starts, so
 * PostgreSQL's 128 MB default cost that much per agent process, and in the control plane
 * once per deployment. Embedded databases start with 16 MB unless told otherwise.
 */
describe("the embedded database's buffer cache", () => {
  const parent = mkdtempSync(join(tmpdir(), "slipway-memory-"));
  const before = process.env.SLIPWAY_PGLITE_SHARED_BUFFERS;
  afterEach(() => {
    if (before === undefined) delete process.env.SLIPWAY_PGLITE_SHARED_BUFFERS;
    else process.env.SLIPWAY_PGLITE_SHARED_BUFFERS = before;
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  const sharedBuffers = async (dir: string) => {
    const db = await openPglite(join(parent, dir), "slipway_agent", { template: inject("pgliteTemplate"), upkeepEveryMs: 0 });
    try {
      return (await db.query<{ shared_buffers: string }>("SHOW shared_buffers"))[0].shared_buffers;
    } finally {
      await db.close();
    }
  };

  it("is 16 MB by default, on a database made from the template and on one opened again", async () => {
    delete process.env.SLIPWAY_PGLITE_SHARED_BUFFERS;
    expect(await sharedBuffers("default")).toBe("16MB");
    expect(await sharedBuffers("default")).toBe("16MB");
  });

  it("takes SLIPWAY_PGLITE_SHARED_BUFFERS", async () => {
    process.env.SLIPWAY_PGLITE_SHARED_BUFFERS = "48MB";
    expect(await sharedBuffers("set")).toBe("48MB");
  });

  it("refuses a size PostgreSQL would refuse, or one without a unit, by name", () => {
    for (const value of ["64kB", "16", "2GB", "16 MB", "-1MB", "16mb"]) {
      expect(() => sharedBuffersSetting({ SLIPWAY_PGLITE_SHARED_BUFFERS: value }), value).toThrow(
        /SLIPWAY_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB/,
      );
    }
    expect(sharedBuffersSetting({ SLIPWAY_PGLITE_SHARED_BUFFERS: "128kB" })).toBe("128kB");
    expect(sharedBuffersSetting({})).toBe("16MB");
  });
});
