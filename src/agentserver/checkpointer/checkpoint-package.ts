/**
 * The `@langchain/langgraph-checkpoint` package Slipway's saver, serializer and store use,
 * imported at first use rather than at start (decision 0053): it brings all of
 * `@langchain/core`, `langsmith` and `zod` (about 500 modules, 12 MB of heap), which a
 * process that serves no run never needs.
 *
 * A project's graph brings its own copy of that package (through its `@langchain/langgraph`),
 * and with it its own `@langchain/core`. Once graphs are loaded, `preferProjectCopy` points
 * here at that copy, the very module the graph already loaded, so that a process that ran
 * holds one `@langchain/core`, not two (about 20 MB each, issue 32). Slipway's own copy is
 * used when the project has none, when it has another major version, or when it lacks a
 * name Slipway takes from it.
 */
import { readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

type CheckpointPackage = typeof import("@langchain/langgraph-checkpoint");

/** What Slipway takes from the package: a copy lacking one of these is not used. */
const USED = ["BaseCheckpointSaver", "JsonPlusSerializer", "TASKS", "maxChannelVersion", "getTextAtPath", "InvalidNamespaceError"];

let loading: Promise<CheckpointPackage> | undefined;
let loaded: CheckpointPackage | undefined;
/** The project's copy, as a file URL, when one is to be tried first. */
let projectCopy: string | undefined;
/** Which copy was loaded: the project's URL, or "slipway". */
let loadedFrom: string | undefined;

/** The package, imported once. */
export function loadCheckpointPackage(): Promise<CheckpointPackage> {
  loading ??= (async () => {
    if (projectCopy) {
      try {
        const module = (await import(projectCopy)) as CheckpointPackage;
        if (USED.every((name) => name in module)) {
          loadedFrom = projectCopy;
          return (loaded = module);
        }
      } catch {
        // Not loadable as it is: Slipway's own copy serves.
      }
    }
    loadedFrom = "slipway";
    return (loaded = await import("@langchain/langgraph-checkpoint"));
  })();
  return loading;
}

/** The package for synchronous code that runs only after `loadCheckpointPackage()` resolved. */
export function loadedCheckpointPackage(): CheckpointPackage {
  if (!loaded) throw new Error("@langchain/langgraph-checkpoint is used before loadCheckpointPackage() resolved");
  return loaded;
}

/** Which copy is in use: the project's (its file URL), "slipway", or undefined before the first use. */
export function checkpointPackageSource(): string | undefined {
  return loadedFrom;
}

/**
 * Uses the copy of the package that the `@langchain/langgraph` of `graphFile` resolves, if
 * it is not Slipway's own and has Slipway's major version. Called once the graphs are
 * loaded; no effect once the package is loaded.
 */
export function preferProjectCopy(graphFile: string): void {
  if (loading || projectCopy) return;
  projectCopy = projectCopyOf(graphFile);
}

function projectCopyOf(graphFile: string): string | undefined {
  try {
    const langgraph = createRequire(graphFile).resolve("@langchain/langgraph");
    const theirs = packageRoot(createRequire(langgraph).resolve("@langchain/langgraph-checkpoint"));
    const ours = packageRoot(createRequire(import.meta.url).resolve("@langchain/langgraph-checkpoint"));
    if (!theirs || !ours || realpathSync(theirs) === realpathSync(ours)) return undefined;
    const manifest = readManifest(theirs);
    if (majorOf(manifest.version) !== majorOf(readManifest(ours).version)) return undefined;
    const entry = esmEntry(manifest.exports);
    return entry ? pathToFileURL(realpathSync(join(theirs, entry))).href : undefined;
  } catch {
    return undefined;
  }
}

/** The folder of the package a resolved file belongs to. */
function packageRoot(file: string): string | undefined {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      if (readManifest(dir).name === "@langchain/langgraph-checkpoint") return dir;
    } catch {
      // no package.json here: one level up
    }
  }
  return undefined;
}

function readManifest(dir: string): { name?: string; version?: string; exports?: unknown } {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
}

function majorOf(version: string | undefined): string | undefined {
  return version?.split(".")[0];
}

/** The file `import` of the package's root loads (its "exports" map's "." entry). */
function esmEntry(exports: unknown): string | undefined {
  const root = (exports as Record<string, unknown> | undefined)?.["."];
  const pick = (target: unknown): string | undefined => {
    if (typeof target === "string") return target;
    if (target && typeof target === "object") {
      const conditions = target as Record<string, unknown>;
      return pick(conditions.import) ?? pick(conditions.node) ?? pick(conditions.default);
    }
    return undefined;
  };
  return pick(root);
}

/**
 * LangGraph's `JsonPlusSerializer`, made when the first value is written or read. Every
 * use of a serializer is awaited, so the import fits in the first call.
 */
export function jsonPlusAtFirstUse(): SerializerProtocol {
  let serializer: Promise<SerializerProtocol> | undefined;
  const real = () => (serializer ??= loadCheckpointPackage().then(({ JsonPlusSerializer }) => new JsonPlusSerializer()));
  return {
    async dumpsTyped(value: unknown) {
      return (await real()).dumpsTyped(value);
    },
    async loadsTyped(type: string, data: Uint8Array | string) {
      return (await real()).loadsTyped(type, data);
    },
  };
}
