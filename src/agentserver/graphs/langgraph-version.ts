import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The version of @langchain/langgraph a graph module imports: the package Node's
 * resolution finds first walking up from the module's directory (a project's own
 * node_modules, or a workspace's above it). Undefined when there is none (the module
 * then gets Slipway's copy, and its version).
 */
export function langgraphVersionFor(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "node_modules", "@langchain", "langgraph", "package.json"), "utf8")) as { version?: unknown };
      if (typeof manifest.version === "string") return manifest.version;
    } catch {
      // not here: one level up
    }
    if (dirname(dir) === dir) return undefined;
  }
}
