import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { installLayerKey } from "../../src/pipeline/builder/install-layer.ts";
import { planInstall } from "../../src/pipeline/builder/package-manager.ts";

const EXAMPLE_AGENT = fileURLToPath(new URL("../../examples/agent/", import.meta.url));
let warming: Promise<void> | undefined;

/**
 * Fills the suite's shared package cache with the example agent's packages, once, and
 * keeps their installed tree there as the install layer of its lock file. A sandboxed
 * control plane never writes that cache (each deployment's builds get a copy of it:
 * docs/decisions/0030), so without this every test deployment would download them from
 * the registry; with the layer, a deployment of a project with the same lock file and
 * package.json copies the tree instead of running `npm ci` again (decision 0055).
 */
export function warmPackageCache(cacheDir: string): Promise<void> {
  const marker = join(cacheDir, ".example-agent");
  if (existsSync(marker)) return Promise.resolve();
  warming ??= (async () => {
    // One worker installs; the other waits for its marker rather than running the same install beside it.
    const lock = `${cacheDir}.warming`;
    mkdirSync(join(cacheDir, ".."), { recursive: true });
    try {
      mkdirSync(lock);
    } catch {
      while (existsSync(lock) && !existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 500));
      if (existsSync(marker)) return;
    }
    const work = mkdtempSync(join(tmpdir(), "slipway-warm-cache-"));
    try {
      cpSync(EXAMPLE_AGENT, work, { recursive: true, filter: (source) => !source.includes("node_modules") });
      mkdirSync(cacheDir, { recursive: true });
      await promisify(execFile)("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: work,
        env: { ...process.env, npm_config_cache: join(cacheDir, "npm"), npm_config_update_notifier: "false" },
      });
      const layer = installLayerKey(planInstall(work), work, null);
      if (layer) {
        mkdirSync(join(cacheDir, "installs", layer), { recursive: true });
        try {
          renameSync(join(work, "node_modules"), join(cacheDir, "installs", layer, "node_modules"));
        } catch {
          // The other test worker's warm-up put it there first.
        }
      }
      writeFileSync(marker, "");
    } finally {
      rmSync(work, { recursive: true, force: true });
      rmSync(lock, { recursive: true, force: true });
    }
  })();
  return warming;
}
