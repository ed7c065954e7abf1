import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Beside langgraph.json: the compiled output's manifest, and (most often) the output. */
export const COMPILED_DIR = ".slipway-compiled";
/** Bumped when the output's shape changes: earlier outputs are then compiled again. */
const FORMAT = 1;

export interface CompiledManifest {
  /** A hash of `files`' contents: the output is current while it matches. */
  key: string;
  /** Paths (from the root) of every file the output depends on. */
  files: string[];
  /** Module the config names -> its compiled file, both from the root. */
  modules: Record<string, string>;
  /** Why the project runs through tsx instead (a compile or its check failed). */
  fallback?: string;
}

export function compileKey(root: string, files: string[]): string {
  const hash = createHash("sha256").update(`${FORMAT}:${process.versions.node.split(".")[0]}\0`);
  for (const file of [...files].sort()) {
    hash.update(relative(root, file)).update("\0");
    try {
      hash.update(readFileSync(file)).update("\0");
    } catch {
      hash.update("<missing>\0");
    }
  }
  return hash.digest("hex").slice(0, 24);
}

/** The manifest when it still matches the files it lists, else undefined. */
export function currentManifest(root: string): CompiledManifest | undefined {
  let manifest: CompiledManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath(root), "utf8")) as CompiledManifest;
  } catch {
    return undefined;
  }
  if (!Array.isArray(manifest.files) || typeof manifest.modules !== "object") return undefined;
  return compileKey(
    root,
    manifest.files.map((file) => join(root, file)),
  ) === manifest.key
    ? manifest
    : undefined;
}

/** Written whole then renamed: a process starting meanwhile reads the old one or the new one. */
export function writeManifest(root: string, manifest: CompiledManifest): void {
  mkdirSync(join(root, COMPILED_DIR), { recursive: true });
  const temporary = `${manifestPath(root)}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(temporary, manifestPath(root));
}

function manifestPath(root: string): string {
  return join(root, COMPILED_DIR, "manifest.json");
}
