import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import type { FastifyInstance } from "fastify";
import { freshBackend, type BackendName } from "../../../test/support/backends.ts";
import { createHttpServer } from "../../http/server.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwaySaver } from "../checkpointer/index.ts";
import { readLanggraphConfig } from "../graphs/langgraph-config.ts";
import { loadGraphs, type GraphRegistry } from "../graphs/registry.ts";
import { registerThreadRoutes } from "./routes.ts";
import { ThreadService } from "./service.ts";
import { ThreadStateService } from "./state-service.ts";
import { refreshThreadSnapshot } from "./snapshot.ts";

/** Test support for the threads suites (not used by the server). */

const FIXTURE_CONFIG = fileURLToPath(new URL("../../../test/fixtures/agents/langgraph.json", import.meta.url));

export interface ThreadsTestApp {
  db: Database;
  graphs: GraphRegistry;
  checkpointer: SlipwaySaver;
  threads: ThreadService;
  app: FastifyInstance;
  url: string;
  client: Client;
  /** Thread ids the service's beforeDelete hook was called with, in order. */
  deletedHookCalls: string[];
  /** Raw request against the app: `[status, parsed body]`. */
  call(method: string, path: string, body?: unknown): Promise<[number, any]>;
  /** Runs `graphId` on the thread with the shared checkpointer, as a run would, then refreshes it. */
  invoke(graphId: string, threadId: string, input: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * The threads routes on a real Fastify server over a fresh database of `backend`. One
 * per suite at a time: the registry attaches its checkpointer to the fixture modules'
 * graph objects, which every registry in the process shares.
 */
export async function startThreadsApp(backend: BackendName): Promise<ThreadsTestApp> {
  const db = await openDatabase({ ...freshBackend(backend, "thr"), component: "agent" });
  const checkpointer = new SlipwaySaver(db);
  const graphs = await loadGraphs(readLanggraphConfig(FIXTURE_CONFIG), { checkpointer, store: undefined });
  const deletedHookCalls: string[] = [];
  const threads = new ThreadService({ db, graphs, checkpointer, beforeDelete: async (id) => void deletedHookCalls.push(id) });
  const app = await createHttpServer({ title: "threads test", version: "0.0.0", validationStyle: "message", logLevel: "error" });
  registerThreadRoutes(app, { threads, state: new ThreadStateService({ db, graphs, checkpointer }) });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  return {
    db,
    graphs,
    checkpointer,
    threads,
    app,
    url,
    deletedHookCalls,
    client: new Client({ apiUrl: url }),
    async call(method, path, body) {
      const response = await fetch(url + path, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return [response.status, text ? JSON.parse(text) : undefined];
    },
    async invoke(graphId, threadId, input) {
      const graph = await graphs.resolve(graphId);
      let runError: unknown;
      try {
        await graph.invoke(input, { configurable: { thread_id: threadId } });
      } catch (error) {
        runError = error;
      }
      await refreshThreadSnapshot({ db, graphs }, threadId, runError === undefined ? undefined : { runError });
    },
    async close() {
      await app.close();
      await db.close();
    },
  };
}
