import { moduleUrl } from "./compile/compiled-modules.ts";
import type { ModuleRef } from "./config-sections.ts";
import { GraphLoadError } from "./load-error.ts";

/**
 * An export of a project module named by langgraph.json beside the graphs (`auth.path`,
 * `http.app`, `store.index.embed`). A promise is awaited, as for graphs. Failures name
 * the key, the file and the module's own error (its stack goes with it).
 */
export async function importProjectExport(ref: ModuleRef): Promise<unknown> {
  let namespace: Record<string, unknown>;
  try {
    namespace = await import(moduleUrl(ref.file));
  } catch (error) {
    throw new GraphLoadError(`${ref.key}: importing ${ref.file} failed: ${messageOf(error)}`, { file: ref.file, cause: error });
  }
  // A CommonJS module (a TypeScript file of a project without "type": "module") arrives as `default`.
  const commonjs = namespace.default as Record<string, unknown> | undefined;
  const fromCommonjs = commonjs && typeof commonjs === "object" && commonjs.__esModule === true && ref.exportName in commonjs;
  const present = fromCommonjs || ref.exportName in namespace;
  if (!present) {
    const names = Object.keys(namespace).filter((name) => name !== "__esModule");
    throw new GraphLoadError(
      `${ref.key}: ${ref.file} has no export named "${ref.exportName}" (it exports ${names.map((n) => `"${n}"`).join(", ") || "nothing"})`,
      {
        file: ref.file,
      },
    );
  }
  let value = fromCommonjs ? commonjs![ref.exportName] : namespace[ref.exportName];
  if (value && typeof (value as PromiseLike<unknown>).then === "function") {
    try {
      value = await value;
    } catch (error) {
      throw new GraphLoadError(`${ref.key}: the promise exported as "${ref.exportName}" by ${ref.file} rejected: ${messageOf(error)}`, {
        file: ref.file,
        cause: error,
      });
    }
  }
  if (value === undefined || value === null)
    throw new GraphLoadError(`${ref.key}: the export "${ref.exportName}" of ${ref.file} is ${String(value)}`, { file: ref.file });
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
