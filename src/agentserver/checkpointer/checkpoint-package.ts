/**
 * Slipway's own copy of `@langchain/langgraph-checkpoint`, imported at first use rather
 * than at start (decision 0053): it brings all of `@langchain/core`, `langsmith` and `zod`
 * (about 500 modules, 12 MB of heap), which a process that serves no run never needs, and
 * a project's graph brings its own copy anyway. The saver and the store reach it through
 * here only.
 */
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

type CheckpointPackage = typeof import("@langchain/langgraph-checkpoint");

let loading: Promise<CheckpointPackage> | undefined;
let loaded: CheckpointPackage | undefined;

/** The package, imported once. */
export function loadCheckpointPackage(): Promise<CheckpointPackage> {
  loading ??= import("@langchain/langgraph-checkpoint").then((module) => (loaded = module));
  return loading;
}

/** The package for synchronous code that runs only after `loadCheckpointPackage()` resolved. */
export function loadedCheckpointPackage(): CheckpointPackage {
  if (!loaded) throw new Error("@langchain/langgraph-checkpoint is used before loadCheckpointPackage() resolved");
  return loaded;
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
