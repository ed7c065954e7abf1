import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type { Extraction, GraphSource, SchemaSet } from "./extract.ts";

/** Bumped whenever the extractor writes different schemas for the same sources. */
const EXTRACTOR_VERSION = 2;

/**
 * The compiler's version, from its package.json: importing the compiler itself here
 * would load its 9 MB into every server process, which only the worker needs.
 */
const TYPESCRIPT_VERSION: string = createRequire(import.meta.url)("typescript/package.json").version;

interface CacheContents {
  extractor: number;
  typescript: string;
  sources: GraphSource[];
  /** The files the compiler read, and one digest of all their contents. */
  files: string[];
  digest: string;
  graphs: Record<string, Record<string, SchemaSet>>;
  problems: Record<string, string>;
}

/**
 * A saved extraction, beside the project. It holds only while every file the compiler
 * read (the project's sources, its tsconfig-resolved libraries' declarations) has the
 * same contents: a changed graph, an upgraded @langchain/langgraph or another
 * TypeScript version each make it stale. Reading it back costs one pass over those
 * files (tens of milliseconds), not a compile.
 */
export function readSavedExtraction(path: string, sources: GraphSource[], root: string): Extraction | undefined {
  let saved: CacheContents;
  try {
    saved = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  if (saved.extractor !== EXTRACTOR_VERSION || saved.typescript !== TYPESCRIPT_VERSION) return undefined;
  if (JSON.stringify(saved.sources) !== JSON.stringify(projectSources(sources, root))) return undefined;
  if (!Array.isArray(saved.files) || digestOf(saved.files, root) !== saved.digest) return undefined;
  return { graphs: saved.graphs, problems: saved.problems, files: saved.files.map((file) => located(file, root)) };
}

/** Saves an extraction (written to a temporary name, then renamed: a reader never sees half a file). */
export function saveExtraction(path: string, sources: GraphSource[], extraction: Extraction, root: string): void {
  const files = extraction.files.map((file) => named(file, root));
  const contents: CacheContents = {
    extractor: EXTRACTOR_VERSION,
    typescript: TYPESCRIPT_VERSION,
    sources: projectSources(sources, root),
    files,
    digest: digestOf(files, root),
    graphs: extraction.graphs,
    problems: extraction.problems,
  };
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(contents));
  renameSync(partial, path);
}

/**
 * Files inside the project are named relative to it (`./src/graph.ts`): the pipeline
 * checks a build in one directory and then moves it, and the saved file must still
 * hold there. Files outside it (the compiler's own lib files) keep their full path.
 */
function named(file: string, root: string): string {
  const inside = relative(root, file);
  return inside && !inside.startsWith("..") && !isAbsolute(inside) ? `.${sep}${inside}` : file;
}

function located(name: string, root: string): string {
  return name.startsWith(`.${sep}`) ? join(root, name) : name;
}

function projectSources(sources: GraphSource[], root: string): GraphSource[] {
  return sources.map((source) => ({ ...source, file: named(source.file, root) }));
}

/** One digest of the files' names and contents; a missing file digests as missing. */
function digestOf(names: string[], root: string): string {
  const hash = createHash("sha256");
  for (const name of names) {
    hash.update(name).update("\0");
    try {
      hash.update(readFileSync(located(name, root)));
    } catch {
      hash.update("\0missing");
    }
    hash.update("\0");
  }
  return hash.digest("hex");
}
