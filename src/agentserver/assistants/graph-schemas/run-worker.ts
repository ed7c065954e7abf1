import { Worker } from "node:worker_threads";
import type { Extraction, GraphSource } from "./extract.ts";

class SchemaTimeoutError extends Error {}

/**
 * Runs extractGraphSchemas in a worker thread: the compiler works for seconds on one
 * core, and on the server's own thread it would stall every request, heartbeat and
 * lease renewal meanwhile. The worker is stopped at `timeoutMs`.
 */
export function extractInWorker(sources: GraphSource[], root: string, timeoutMs: number): Promise<Extraction> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./worker.mjs", import.meta.url), {
      workerData: { sources, root },
      // The compiler of a large project can take a lot of memory; past this the worker
      // dies (reported as a failure) instead of the server.
      resourceLimits: { maxOldGenerationSizeMb: 2048 },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new SchemaTimeoutError(`schema extraction took longer than ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    timer.unref();
    const settle = () => clearTimeout(timer);
    worker.once("message", (result: Extraction) => {
      settle();
      resolve(result);
      void worker.terminate();
    });
    worker.once("error", (error) => {
      settle();
      reject(error);
    });
    worker.once("exit", (code) => {
      settle();
      reject(new Error(`schema extraction stopped (exit code ${code})`));
    });
  });
}
