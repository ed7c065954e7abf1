import { moduleUrl } from "./compile/compiled-modules.ts";
import { GraphLoadError } from "./load-error.ts";

/**
 * Imports the module of one graph and returns its export, a promise of a graph
 * already settled. Every failure is a GraphLoadError naming the graph, the file and
 * the cause (the module's own error, with its stack), never a loader's secondary error.
 */
export async function importGraphExport(graphId: string, file: string, exportName: string): Promise<unknown> {
  let namespace: Record<string, unknown>;
  try {
    namespace = await import(moduleUrl(file));
  } catch (error) {
    throw new GraphLoadError(`graph "${graphId}": importing ${file} failed: ${messageOf(error)}`, { graphId, file, cause: error });
  }
  const found = exportOf(namespace, exportName);
  if (!found.present) {
    const names = exportNames(namespace);
    const known = names.length ? `it exports ${names.map((n) => `"${n}"`).join(", ")}` : "it has no exports";
    throw new GraphLoadError(`graph "${graphId}": ${file} has no export named "${exportName}" (${known})`, { graphId, file });
  }
  let value = found.value;
  if (isThenable(value)) {
    // `export const graph = (async () => builder.compile())()`: a graph built asynchronously.
    try {
      value = await value;
    } catch (error) {
      throw new GraphLoadError(`graph "${graphId}": the promise exported as "${exportName}" by ${file} rejected: ${messageOf(error)}`, {
        graphId,
        file,
        cause: error,
      });
    }
  }
  if (value === undefined || value === null) {
    throw new GraphLoadError(`graph "${graphId}": the export "${exportName}" of ${file} is ${String(value)}`, { graphId, file });
  }
  return value;
}

/**
 * An export of an ES module, or of a CommonJS one (a TypeScript file in a project
 * without "type": "module"): its exports arrive as the namespace's `default`, marked
 * `__esModule` when they were compiled from ES syntax.
 */
function exportOf(namespace: Record<string, unknown>, name: string): { present: boolean; value?: unknown } {
  const commonjs = namespace.default;
  if (isRecord(commonjs) && commonjs.__esModule === true && name in commonjs) return { present: true, value: commonjs[name] };
  if (name in namespace) return { present: true, value: namespace[name] };
  if (isRecord(commonjs) && name in commonjs) return { present: true, value: commonjs[name] };
  return { present: false };
}

function exportNames(namespace: Record<string, unknown>): string[] {
  const commonjs = namespace.default;
  const names = new Set(Object.keys(namespace));
  if (isRecord(commonjs) && !looksLikeRunnable(commonjs)) {
    // A CommonJS module's exports object: its names are the exports (how Node's loader
    // or tsx's presents it, as `default` alone or beside them, varies with the loader).
    names.delete("default");
    for (const name of Object.keys(commonjs)) names.add(name);
  }
  names.delete("__esModule");
  return [...names].sort();
}

function looksLikeRunnable(value: Record<string, unknown>): boolean {
  return typeof value.invoke === "function" || typeof value.compile === "function";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return isRecord(value) && typeof (value as { then?: unknown }).then === "function";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
