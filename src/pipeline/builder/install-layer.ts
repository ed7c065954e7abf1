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

/**
 * Copies the layer of `key` from another package cache (the shared one) into `cacheDir`,
 * unless it is there already; false when neither has it. A copy, never links: the build
 * that links it owns and may write its files, which must not change the shared layer
 * (docs/decisions/0030, 0055).
 */
export async function copyInstallLayer(fromCache: string, cacheDir: string, key: string): Promise<boolean> {
  if (existsSync(layerDir(cacheDir, key))) return true;
  if (!existsSync(layerDir(fromCache, key))) return false;
  const final = join(cacheDir, "installs", key);
  const partial = `${final}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  // Not fs.cp: one file at a time, it took 30 s for the example agent's 6,000 files on a loaded machine.
  await copyTree(join(fromCache, "installs", key), partial, copyFile);
  try {
    await rename(partial, final);
  } catch {
    // Another build copied it first.
    await rm(partial, { recursive: true, force: true });
  }
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
function linkTree(from: string, to: string): Promise<void> {
  return copyTree(from, to, async (source, target) => {
    try {
      await link(source, target);
    } catch {
      await copyFile(source, target);
    }
  });
}

/** Recreates the directories and symlinks of `from` in `to`, and each file with `copy`, a directory's entries at once. */
async function copyTree(from: string, to: string, copy: (source: string, target: string) => Promise<void>): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) return copyTree(source, target, copy);
      if (entry.isSymbolicLink()) return symlink(await readlink(source), target);
      return copy(source, target);
    }),
  );
}
