import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { openSharedPglite } from "../../storage/shared-pglite-client.ts";
import { sharedThreadSizes } from "../../storage/pglite-threads.ts";
import type { PipelineDeps } from "../context.ts";
import { DeploymentStorage } from "./deployment-storage.ts";
import { Isolation } from "./isolation.ts";
import { ResourceLimits } from "./resource-limits.ts";
import { Sandbox } from "./sandbox.ts";

/**
 * A deployment's embedded database is closed when it sleeps and opened again when it
 * wakes: an opening that comes while the close is under way waits for it, so two PGlite
 * instances never hold one directory.
 */
describe("a deployment's embedded database, released and attached again", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "slipway-deployment-storage-"));
  const template = process.env.SLIPWAY_PGLITE_TEMPLATE;
  process.env.SLIPWAY_PGLITE_TEMPLATE = inject("pgliteTemplate");
  const isolation = new Isolation(Sandbox.none("test"), ResourceLimits.probe(undefined, { SLIPWAY_RESOURCE_LIMITS: "off" }));
  const storage = new DeploymentStorage({ dataDir } as PipelineDeps, isolation);
  afterAll(async () => {
    await storage.close();
    if (template === undefined) delete process.env.SLIPWAY_PGLITE_TEMPLATE;
    else process.env.SLIPWAY_PGLITE_TEMPLATE = template;
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The most databases open at once on the shared threads while `work` runs. */
  const mostOpenDuring = async (work: Promise<unknown>) => {
    let most = 0;
    let done = false;
    const watch = (async () => {
      while (!done) {
        most = Math.max(
          most,
          sharedThreadSizes().reduce((sum, n) => sum + n, 0),
        );
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await work.finally(() => (done = true));
    await watch;
    return most;
  };

  const write = async (socket: string, sql: string) => {
    const client = await openSharedPglite(socket);
    try {
      return await client.query<{ n: number }>(sql);
    } finally {
      await client.close();
    }
  };

  it("opens it again only once its close has finished, with the data kept", async () => {
    const id = "0c9e3c56-3f1a-4f7e-9d2b-6d1f0a1b2c3d";
    const first = await storage.attach(id);
    await write(first.env.SLIPWAY_STORAGE_SOCKET, "CREATE TABLE kept AS SELECT 41 AS n");

    // A wake while the sleep's release is under way.
    const released = storage.release(id);
    const again = storage.attach(id);
    expect(await mostOpenDuring(Promise.all([released, again]))).toBe(1);
    expect(await write((await again).env.SLIPWAY_STORAGE_SOCKET, "SELECT n + 1 AS n FROM kept")).toEqual([{ n: 42 }]);

    // A release and a removal that come while it opens wait for it, then close it.
    await storage.release(id);
    const opening = storage.attach(id);
    await storage.remove(id);
    await opening;
    expect(sharedThreadSizes()).toEqual([]);
  });
});
