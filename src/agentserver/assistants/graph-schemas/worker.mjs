// Worker-thread entry of schema extraction (run-worker.ts). Plain JavaScript: a worker
// does not inherit the TypeScript loader of the thread that starts it, so it loads
// the extractor through tsx's API itself.
import { parentPort, workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

const { extractGraphSchemas } = await tsImport("./extract.ts", import.meta.url);
parentPort.postMessage(extractGraphSchemas(workerData.sources, workerData.root));
