import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, link, mkdir, readdir, readlink, rename, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import type { InstallPlan } from "./package-manager.ts";

/** Bumped when what a layer holds changes shape. */
const LAYER_FORMAT = 1;
/** Root scripts that an install runs and that may write outside node_modules. */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare", "prepublish"];

/**
 * The installed dependency tree of a lock file, kept in the package cache so that the next
 * build with the same lock file and manifest links it instead of installing again (what a
 * Dockerfile's `COPY package-lock.json` + `RUN npm ci` layer gives the vendor's builds).
 *
 * Only where node_modules is all the install produces: one package (no workspaces), a
 * lock file, no install scripts of its own, no build_command (which could change the
 * linked files in place). Undefined means: install as usual.
 */
export function installLayerKey(plan: InstallPlan, installDir: string, buildCommand: string | null): string | undefined {
  if (buildCommand || !plan.lockFile) return undefined;
  if (existsSync(join(installDir, "pnpm-workspace.yaml"))) return undefined;
  let manifestText: string;
  let manifest: { workspaces?: unknown; scripts?: Record<string, unknown> };
  try {
    manifestText = readFileSync(join(installDir, "package.json"), "utf8");
    manifest = JSON.parse(manifestText);
  } catch {
    return undefined;
  }
  if (manifest.workspaces !== undefined) return undefined;
  if (INSTALL_SCRIPTS.some((name) => manifest.scripts?.[name] !== undefined)) return undefined;
  const node = process.versions.node.split(".")[0];
  return createHash("sha256")
    .update(JSON.stringify({ format: LAYER_FORMAT, manager: plan.manager, node, platform: process.platform, arch: process.arch }))
    .update(readFileSync(plan.lockFile))
    .update(manifestText)
    .digest("hex")
    .slice(0, 32);
}

function layerDir(cacheDir: string, key: string): string {
  return join(cacheDir, "installs", key, "node_modules");
}

/** Links the layer's node_modules into installDir; false when there is no such layer. */
export async function restoreInstallLayer(cacheDir: string, key: string, installDir: string): Promise<boolean> {
  const from = layerDir(cacheDir, key);
  if (!existsSync(from)) return false;
  const to = join(installDir, "node_modules");
  await rm(to, { recursive: true, force: true });
  await linkTree(from, to);
  return true;
}

/** Keeps installDir's node_modules as the layer of `key` (written aside, then renamed in). */
export async function saveInstallLayer(cacheDir: string, key: string, installDir: string): Promise<void> {
  const from = join(installDir, "node_modules");
  const final = join(cacheDir, "installs", key);
  if (!existsSync(from) || existsSync(final)) return;
  const partial = `${final}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await linkTree(from, join(partial, "node_modules"));
  try {
    await rename(partial, final);
  } catch {
    // Another build saved the same layer first.
    await rm(partial, { recursive: true, force: true });
  }
}

/** A copy of a tree made of hard links (a plain copy across file systems); symlinks as they are. */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) return linkTree(source, target);
      if (entry.isSymbolicLink()) return symlink(await readlink(source), target);
      try {
        await link(source, target);
      } catch {
        await copyFile(source, target);
      }
    }),
  );
}
