import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { Extraction, GraphSource, SchemaSet } from "./extract.ts";

/** Bumped whenever the extractor writes different schemas for the same sources. */
const EXTRACTOR_VERSION = 1;

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
export function readSavedExtraction(path: string, sources: GraphSource[]): Extraction | undefined {
  let saved: CacheContents;
  try {
    saved = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  if (saved.extractor !== EXTRACTOR_VERSION || saved.typescript !== TYPESCRIPT_VERSION) return undefined;
  if (JSON.stringify(saved.sources) !== JSON.stringify(sources)) return undefined;
  if (!Array.isArray(saved.files) || digestOf(saved.files) !== saved.digest) return undefined;
  return { graphs: saved.graphs, problems: saved.problems, files: saved.files };
}

/** Saves an extraction (written to a temporary name, then renamed: a reader never sees half a file). */
export function saveExtraction(path: string, sources: GraphSource[], extraction: Extraction): void {
  const contents: CacheContents = {
    extractor: EXTRACTOR_VERSION,
    typescript: TYPESCRIPT_VERSION,
    sources,
    files: extraction.files,
    digest: digestOf(extraction.files),
    graphs: extraction.graphs,
    problems: extraction.problems,
  };
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(contents));
  renameSync(partial, path);
}

/** One digest of the files' names and contents; a missing file digests as missing. */
function digestOf(files: string[]): string {
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file).update("\0");
    try {
      hash.update(readFileSync(file));
    } catch {
      hash.update("\0missing");
    }
    hash.update("\0");
  }
  return hash.digest("hex");
}
