import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";

/**
 * What an idle `slipway up` (embedded storage, fresh data directory, no deployment) holds
 * (issue 32, goal 2; decision 0054): the packages only some requests or settings need are
 * not loaded, and its memory stays under the goal's 200 MB.
 */
const PRELOAD = fileURLToPath(new URL("../support/loaded-modules.mjs", import.meta.url));

/**
 * Packages an idle embedded control plane has no use for, and what loads them when needed.
 * Not `tar`: a fresh data directory's control database is unpacked from the template with it
 * (decision 0052), so this control plane, started on a fresh one, has loaded it.
 */
const NOT_AT_REST: Record<string, string> = {
  ioredis: "a Redis URL for the rate limits",
  pg: "a PostgreSQL URL",
  jose: "bearer tokens (JWT) configured",
  ajv: "the first request validated or response serialized",
  "@fastify/ajv-compiler": "never: Slipway validates with its own Ajv instances",
};

let root: string;
/** As a user starts it; its memory is measured. */
let plain: ControlPlaneProcess;
/** With the preload that lists its modules (its hook thread costs memory of its own). */
let probed: ControlPlaneProcess;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "slipway-idle-"));
  [plain, probed] = await Promise.all([
    // No template given: the first cluster is written as a user's first start writes it.
    startControlPlane(["--data-dir", join(root, "plain")], { SLIPWAY_DATABASE_URL: undefined, SLIPWAY_PGLITE_TEMPLATE: undefined }),
    startControlPlane(["--data-dir", join(root, "probed")], {
      SLIPWAY_DATABASE_URL: undefined,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${PRELOAD}`.trim(),
      SLIPWAY_TEST_MODULES_FILE: join(root, "modules.json"),
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([plain?.kill("SIGTERM"), probed?.kill("SIGTERM")]);
  rmSync(root, { recursive: true, force: true });
});

async function loadedModules(): Promise<string[]> {
  const file = join(root, "modules.json");
  rmSync(file, { force: true });
  probed.child.kill("SIGUSR2");
  for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return (JSON.parse(readFileSync(file, "utf8")) as { modules: string[] }).modules;
}

describe("an idle control plane", () => {
  it("has not loaded the packages that only some requests or settings need", async () => {
    const modules = await loadedModules();
    // The list is real: the HTTP server (CommonJS) and the CLI parser's ES module entry are in it.
    // (TypeBox, the route schemas' ES modules, is compiled into Slipway's bundle since decision 0053's addendum.)
    expect(modules.some((url) => url.includes("/node_modules/fastify/"))).toBe(true);
    expect(modules.some((url) => url.endsWith("/node_modules/commander/esm.mjs"))).toBe(true);
    const loaded = Object.keys(NOT_AT_REST).filter((name) => modules.some((url) => url.includes(`/node_modules/${name}/`)));
    expect(loaded.map((name) => `${name} (needed for ${NOT_AT_REST[name]})`)).toEqual([]);
  });

  it("holds under 200 MB of resident memory, its fresh data directory's first cluster written by a process of its own", () => {
    const rollup = readFileSync(`/proc/${plain.child.pid}/smaps_rollup`, "utf8");
    const rssMb = Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1]) / 1024;
    expect(rssMb).toBeGreaterThan(0);
    expect(rssMb).toBeLessThan(200);
  });
});
