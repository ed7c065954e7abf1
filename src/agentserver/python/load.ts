import { existsSync } from "node:fs";
import { join } from "node:path";
import type { GraphSpec } from "../graphs/graph-spec.ts";
import { GraphLoadError } from "../graphs/load-error.ts";
import type { ModuleRef } from "../graphs/config-sections.ts";
import type { HandlerCache } from "../custom-auth/handlers.ts";
import type { FetchHandler } from "../http-app/load-app.ts";
import { pythonAuthHandlers, type PythonAuthShape } from "./python-auth.ts";
import { PythonGraph } from "./python-graph.ts";
import { pythonHttpApp } from "./python-http-app.ts";
import { PythonWorker, PythonWorkerError } from "./worker.ts";

/**
 * The interpreter for a project's Python graphs: SLIPWAY_PYTHON, else the project's own
 * virtual environment (`.venv`, as a build makes it), else `python3` from the PATH.
 */
export function pythonFor(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.SLIPWAY_PYTHON) return env.SLIPWAY_PYTHON;
  const venv = join(root, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

/**
 * Starts the worker for a project's Python graphs and loads them; a graph that fails to
 * import stops the start with its traceback, as a JS graph's error does. The worker
 * loads them again after each restart. A Python `auth.path` is loaded by the same
 * worker, and comes back as handlers the server's custom auth applies; a Python
 * `http.app` (ASGI) too, and comes back as a fetch handler.
 */
export async function startPythonGraphs(
  root: string,
  specs: Record<string, GraphSpec>,
  log: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
  { auth, app }: { auth?: ModuleRef; app?: ModuleRef } = {},
): Promise<{ graphs: Map<string, PythonGraph>; worker: PythonWorker; auth?: HandlerCache; app?: FetchHandler }> {
  const wanted = Object.entries(specs).map(([graphId, spec]) => ({
    graph_id: graphId,
    ...(spec.module ? { module: spec.module } : { path: spec.path }),
    attr: spec.exportName,
  }));
  let authShape: PythonAuthShape | undefined;
  const worker = new PythonWorker({
    python: pythonFor(root),
    root,
    env: process.env,
    log,
    ...watchdogSettings(process.env),
    onStart: async (started) => {
      await started.send("load", { graphs: wanted });
      // auth.path in Python: loaded again after each restart, as the graphs are.
      if (auth) authShape = (await started.send("load_auth", { path: auth.file, attr: auth.exportName })) as PythonAuthShape;
      if (app) await started.send("load_app", { path: app.file, attr: app.exportName });
    },
  });
  try {
    await worker.start();
  } catch (error) {
    await worker.stop();
    if (error instanceof PythonWorkerError && error.traceback) {
      throw new GraphLoadError(`loading the Python graphs failed: ${error.name}: ${error.message}\n${relativeTraceback(error.traceback, root)}`);
    }
    throw new GraphLoadError(`loading the Python graphs failed: ${(error as Error).message}`);
  }
  const graphs = new Map(Object.keys(specs).map((graphId) => [graphId, new PythonGraph(worker, graphId)]));
  return {
    graphs,
    worker,
    ...(authShape ? { auth: pythonAuthHandlers(worker, authShape) } : {}),
    ...(app ? { app: pythonHttpApp(worker) } : {}),
  };
}

/** The watchdog's limits from the environment (docs/python-protocol.md), refused when not numbers. */
export function watchdogSettings(env: NodeJS.ProcessEnv): { pingTimeoutMs?: number; memoryLimitBytes?: number } {
  const positive = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new GraphLoadError(`${name} must be a positive number, not "${text}"`);
    return value;
  };
  const seconds = positive("SLIPWAY_PYTHON_PING_TIMEOUT_SECONDS");
  const megabytes = positive("SLIPWAY_PYTHON_MEMORY_LIMIT_MB");
  return {
    ...(seconds !== undefined ? { pingTimeoutMs: seconds * 1000 } : {}),
    ...(megabytes !== undefined ? { memoryLimitBytes: megabytes * 1024 * 1024 } : {}),
  };
}

/** A traceback with the project's paths made relative to it, and the worker's own frames left out. */
function relativeTraceback(traceback: string, root: string): string {
  return traceback
    .split("\n")
    .filter((line, i, lines) => !/slipway_worker[/\\]/.test(line) && !/slipway_worker[/\\]/.test(lines[i - 1] ?? ""))
    .join("\n")
    .split(`${root}/`)
    .join("");
}
