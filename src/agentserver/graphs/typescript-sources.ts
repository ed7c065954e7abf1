import { readdirSync, statSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";
import type { LanggraphConfig } from "./langgraph-config.ts";

/** TypeScript that Node cannot load by itself; declaration files are never loaded. */
const TYPESCRIPT = /\.(c|m)?tsx?$/;
const DECLARATION = /\.d\.(c|m)?tsx?$/;
/** A tree larger than this is not read through: the loader is registered, as before. */
const MAX_ENTRIES = 20_000;

/**
 * Whether a project may load TypeScript, so that `slipway agent` needs tsx's loader. Its
 * ES module hooks run on a thread of their own (a second V8 heap, some 20 MB) and every
 * module imported after it, the project's dependencies included, makes a round trip to
 * that thread (decision 0053). A project without TypeScript is spared both.
 *
 * True when a module the config names (graphs, auth.path, http.app, store.index.embed,
 * ui) is TypeScript or lies outside the project's directory, or when the directory holds
 * a TypeScript file outside node_modules and dot-directories (a JavaScript graph may
 * import one), or a symbolic link to a directory, or too many entries to read through.
 */
export function projectNeedsTypeScript(config: LanggraphConfig): boolean {
  for (const file of namedModules(config)) {
    if (TYPESCRIPT.test(file) || outside(config.root, file)) return true;
  }
  return treeHoldsTypeScript(config.root);
}

function namedModules(config: LanggraphConfig): string[] {
  return [...serverModules(config), ...Object.values(config.ui?.components ?? {})];
}

/** The modules the config names that the server imports (graphs, auth.path, http.app, store.index.embed); ui is bundled for the browser. */
export function serverModules(config: LanggraphConfig): string[] {
  const files = Object.values(config.graphs)
    .filter((graph) => graph.language === "js")
    .map((graph) => graph.path);
  if (config.auth?.language === "js") files.push(config.auth.module.file);
  if (config.http.app) files.push(config.http.app.file);
  const embed = config.store.index?.embed;
  if (embed && "module" in embed) files.push(embed.module.file);
  return [...new Set(files)];
}

export function outside(root: string, file: string): boolean {
  const path = relative(root, file);
  return path.startsWith("..") || isAbsolute(path);
}

function treeHoldsTypeScript(root: string): boolean {
  const pending = [root];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return true;
    }
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) return true;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) pending.push(join(dir, entry.name));
        continue;
      }
      if (TYPESCRIPT.test(entry.name) && !DECLARATION.test(entry.name)) return true;
      // A linked directory is not read through (it may lead anywhere): assume it holds some.
      if (entry.isSymbolicLink() && isDirectory(join(dir, entry.name)) && entry.name !== "node_modules" && !entry.name.startsWith(".")) return true;
    }
  }
  return false;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
