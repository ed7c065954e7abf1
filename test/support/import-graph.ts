import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** One import between two of our source files, as paths relative to `src/`. */
export interface ImportEdge {
  from: string;
  to: string;
}

/**
 * Every import (static, type-only, dynamic `import()`, `export ... from`) between the
 * source files under `root`, tests left out: the module graph the import rules check.
 * Specifiers are found by TypeScript's own pre-processor (no type check, so it is fast)
 * and resolved as relative paths; package imports are not edges.
 */
export function importGraph(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      edges.push({ from: relative(root, file), to: relative(root, resolve(dirname(file), fileName)) });
    }
  }
  return edges;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The top-level folder of a path under src/ (its component): `pipeline/jobs/runner.ts` → `pipeline`. */
export function componentOf(path: string): string {
  return path.split(/[\\/]/)[0];
}

/** Files that hold a component's SQL: `repository.ts`, `flow-repository.ts`, ... */
export function isRepository(path: string): boolean {
  return /(^|[\\/-])repository\.ts$/.test(path);
}

/** For failure messages: one edge per line. */
export function describeEdges(edges: readonly ImportEdge[]): string[] {
  return edges.map((edge) => `${edge.from} -> ${edge.to}`);
}
