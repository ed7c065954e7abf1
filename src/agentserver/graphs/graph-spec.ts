import { resolve } from "node:path";

/** One entry of langgraph.json `graphs`, resolved: which language runs it and where it lives. */
export interface GraphSpec {
  /** A JS or Python file (absolute), or for a Python module spec its dotted name. */
  path: string;
  exportName: string;
  language: "js" | "python";
  /** Set for `package.module:attr`: imported by name from the worker's path. */
  module?: string;
  description?: string;
}

const PYTHON_MODULE = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;
const JS_FILE = /\.(m|c)?(j|t)sx?$/;

/**
 * Reads `./path.py:attr`, `package.module:attr` (Python, as the vendor reads them) and
 * `./path.ts:export` (JS). A dotted name ending like a JS file stays JS.
 */
export function resolveGraphSpec(root: string, modulePath: string, exportName: string | undefined): GraphSpec {
  if (modulePath.endsWith(".py")) return { path: resolve(root, modulePath), exportName: exportName ?? "graph", language: "python" };
  if (PYTHON_MODULE.test(modulePath) && !JS_FILE.test(modulePath)) {
    return { path: modulePath, module: modulePath, exportName: exportName ?? "graph", language: "python" };
  }
  return { path: resolve(root, modulePath), exportName: exportName ?? "default", language: "js" };
}
