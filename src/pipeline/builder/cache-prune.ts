import { existsSync, lstatSync, readdirSync, readlinkSync, renameSync, type Stats } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { buildsUnderway } from "./underway.ts";

/** The package managers' download caches in a package cache (python-wheels is the operator's mirror: never pruned). */
export const DOWNLOAD_CACHES = ["npm", "yarn", "pnpm-store", "bun", "pip", "uv"];
/** A folder being removed; one a crash left is removed by the next pruning of its cache. */
const REMOVING = ".removing-";

export interface CacheUser {
  install_layer?: string | null;
  /** langgraph.json of the build: a Python build's `.venv` link beside it names its environment. */
  config_file: string;
}

export interface CachePruning {
  /** Builds left that use this cache: their install layers and Python environments stay. */
  users: readonly CacheUser[];
  /** Download caches larger than this (bytes) are removed; 0 when no deployment is left to use them. */
  downloadLimitBytes: number;
}

/**
 * Removes from a package cache what no build left uses (docs/decisions/0051): install
 * layers (`installs/<key>`) and Python environments (`python-envs/<key>` and the folder
 * it links) that no user names, their half-made leftovers, and the download caches when
 * they exceed the limit. Nothing is removed while this process runs a build. What goes
 * is first renamed aside at once (synchronously: no build can start in between), then
 * deleted. Returns what was removed, relative to `cacheDir`.
 */
export async function pruneCache(cacheDir: string, pruning: CachePruning): Promise<string[]> {
  if (!existsSync(cacheDir)) return [];
  const downloadBytes = await sizeOf(DOWNLOAD_CACHES.map((name) => join(cacheDir, name)));
  if (buildsUnderway() > 0) return [];
  const doomed = [
    ...unusedLayers(cacheDir, pruning.users),
    ...unusedEnvironments(cacheDir, pruning.users),
    ...(downloadBytes > pruning.downloadLimitBytes ? DOWNLOAD_CACHES.filter((name) => existsSync(join(cacheDir, name))) : []),
  ];
  const aside = doomed.map((name) => {
    const to = join(cacheDir, `${REMOVING}${name.replaceAll("/", "-")}`);
    renameSync(join(cacheDir, name), to);
    return to;
  });
  const leftovers = readdirSync(cacheDir)
    .filter((name) => name.startsWith(REMOVING))
    .map((name) => join(cacheDir, name));
  for (const path of new Set([...aside, ...leftovers])) await rm(path, { recursive: true, force: true });
  return doomed;
}

function unusedLayers(cacheDir: string, users: readonly CacheUser[]): string[] {
  const installs = join(cacheDir, "installs");
  if (!existsSync(installs)) return [];
  const used = new Set(users.map((user) => user.install_layer).filter(Boolean));
  return readdirSync(installs)
    .filter((name) => !used.has(name))
    .map((name) => `installs/${name}`);
}

/** Environments are published as `<key>` links to `<key>.<random>` folders (python-env.ts). */
function unusedEnvironments(cacheDir: string, users: readonly CacheUser[]): string[] {
  const envs = join(cacheDir, "python-envs");
  if (!existsSync(envs)) return [];
  const used = new Set(users.map((user) => environmentOf(user.config_file)).filter((dir): dir is string => dir !== undefined));
  const entries = readdirSync(envs);
  const kept = new Set<string>();
  for (const name of entries) {
    const path = join(envs, name);
    const target = linkTarget(path);
    if (used.has(path) || (target !== undefined && used.has(target))) {
      kept.add(name);
      if (target !== undefined && dirname(target) === envs) kept.add(target.slice(envs.length + 1));
    }
  }
  return entries.filter((name) => !kept.has(name)).map((name) => `python-envs/${name}`);
}

/** The environment folder a build's `.venv` link names, if it has one. */
function environmentOf(configFile: string): string | undefined {
  return linkTarget(join(dirname(configFile), ".venv"));
}

function linkTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink()) return undefined;
    const target = readlinkSync(path);
    return isAbsolute(target) ? target : resolve(dirname(path), target);
  } catch {
    return undefined;
  }
}

/** Bytes the files under `paths` take on disk (allocated blocks, as `du`). */
export async function sizeOf(paths: string[]): Promise<number> {
  let total = 0;
  const walk = async (path: string): Promise<void> => {
    let stat: Stats;
    try {
      stat = await lstat(path);
    } catch {
      return;
    }
    total += stat.blocks * 512;
    if (!stat.isDirectory()) return;
    for (const entry of await readdir(path)) await walk(join(path, entry));
  };
  for (const path of paths) await walk(path);
  return total;
}
