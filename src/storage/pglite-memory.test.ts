import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { openPglite, sharedBuffersSetting } from "./pglite.ts";
import { unpackTemplate } from "./pglite-template.ts";

/**
 * Issue 32's memory goals: PGlite makes its whole buffer cache resident as it starts, so
 * PostgreSQL's 128 MB default cost that much per agent process, and in the control plane
 * once per deployment. Embedded databases start with 8 MB unless told otherwise.
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

  it("is 8 MB by default, on a database made from the template and on one opened again", async () => {
    delete process.env.SLIPWAY_PGLITE_SHARED_BUFFERS;
    expect(await sharedBuffers("default")).toBe("8MB");
    expect(await sharedBuffers("default")).toBe("8MB");
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
    expect(sharedBuffersSetting({})).toBe("8MB");
  });
});

/** What each database's thread holds beside PostgreSQL (decision 0052). */
describe("an embedded database's thread", () => {
  const parent = mkdtempSync(join(tmpdir(), "slipway-thread-memory-"));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));
  const open = (dir: string, template?: string) => openPglite(join(parent, dir), "slipway_agent", { template: template ?? "", upkeepEveryMs: 0 });

  it("keeps its young generation at 4 MB however busy it was (V8's default for the process: 16 MB)", async () => {
    const db = await open("busy", inject("pgliteTemplate"));
    try {
      await db.query("CREATE TABLE doc (id int PRIMARY KEY, body jsonb)");
      const body = JSON.stringify({ messages: Array.from({ length: 50 }, (_, i) => ({ role: "user", content: `${"x".repeat(500)} ${i}` })) });
      for (let i = 0; i < 400; i++) {
        await db.query("INSERT INTO doc VALUES ($1, $2)", [i, body]);
        await db.query("SELECT body FROM doc WHERE id = $1", [i]);
      }
      const { heapNewSpace } = await db.threadMemory();
      expect(heapNewSpace).toBeGreaterThan(0);
      expect(heapNewSpace).toBeLessThanOrEqual(4 * 1024 * 1024);
    } finally {
      await db.close();
    }
  });

  it("holds no copy of the template it was made from: the control plane unpacked it", async () => {
    const made = await open("made", inject("pgliteTemplate"));
    const { arrayBuffers } = await made.threadMemory();
    await made.close();
    // What stays: PGlite's 6 MB file bundle, and until the thread collects, the 9 MB of
    // pglite.wasm it compiled. PGlite's own loading of the 9 MB tarball left 35 MB and more.
    expect(arrayBuffers).toBeLessThan(24 * 1024 * 1024);
  });

  it("unpacks the template again over an unpacking cut short (PG_VERSION comes last)", async () => {
    const dir = join(parent, "cut-short");
    mkdirSync(dir);
    await unpackTemplate(inject("pgliteTemplate"), dir);
    rmSync(join(dir, "PG_VERSION"));
    truncateSync(join(dir, "global", "pg_control"), 0);
    const db = await open("cut-short", inject("pgliteTemplate"));
    try {
      expect(existsSync(join(dir, "PG_VERSION"))).toBe(true);
      expect(statSync(join(dir, "global", "pg_control")).size).toBeGreaterThan(0);
      expect(await db.query<{ n: number }>("SELECT 1 AS n")).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});
