import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { Client } from "@langchain/langgraph-sdk";
import { END, START, StateGraph } from "@langchain/langgraph";
import { registry } from "@langchain/langgraph/zod";
import { z } from "zod/v4";
import { createHttpServer } from "../../http/server.ts";
import { openDatabase } from "../../storage/open.ts";
import type { Database } from "../../storage/database.ts";
import { freshBackend, type BackendName } from "../../../test/support/backends.ts";
import { readLanggraphConfig } from "../graphs/langgraph-config.ts";
import { loadGraphs, type GraphRegistry } from "../graphs/registry.ts";
import { registerAssistantRoutes, type AssistantRouteDeps } from "./routes.ts";
import { AssistantService, type AssistantServiceDeps } from "./service.ts";

/**
 * Test support for the assistants suites (not itself a test): a real database on the
 * chosen back end, the fixture graphs plus two zod-defined ones, and a Fastify app on
 * 127.0.0.1 driven through the official SDK client.
 */
const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/agents/langgraph.json", import.meta.url));

const TypedState = z.object({
  topic: z.string().describe("what to write about"),
  count: z.number().default(0),
  items: z.array(z.string()).register(registry, { reducer: { fn: (a: string[], b: string[]) => a.concat(b) }, default: () => [] }),
});
const TypedContext = z.object({ model: z.string().describe("which model to call") });

const noop = async () => ({});
/** deep: two nodes, so an x-ray drawing of a graph holding it shows both. */
const deep = new StateGraph(TypedState).addNode("d1", noop).addNode("d2", noop).addEdge(START, "d1").addEdge("d1", "d2").addEdge("d2", END).compile();
const middle = new StateGraph(TypedState).addNode("m1", noop).addNode("deep", deep).addEdge(START, "m1").addEdge("m1", "deep").addEdge("deep", END).compile();

/** typed: a zod state and context schema, and two levels of subgraphs (sub, sub|deep). */
const typed = new StateGraph(TypedState, { context: TypedContext })
  .addNode("plan", async (state) => ({ count: state.count + 1 }))
  .addNode("sub", middle)
  .addEdge(START, "plan")
  .addEdge("plan", "sub")
  .addEdge("sub", END)
  .compile();

/** Graph ids the fixture langgraph.json declares, plus the one registered here. */
const FIXTURE_GRAPHS = ["agent", "slow", "failing", "approval", "nested", "builder", "factory"];
export const ALL_GRAPHS = [...FIXTURE_GRAPHS, "typed"];

async function loadTestGraphs(): Promise<GraphRegistry> {
  const graphs = await loadGraphs(readLanggraphConfig(FIXTURE), { checkpointer: undefined, store: undefined });
  graphs.register("typed", typed, "A zod-typed graph with nested subgraphs");
  return graphs;
}

export interface AssistantTestServer {
  db: Database;
  graphs: GraphRegistry;
  assistants: AssistantService;
  app: FastifyInstance;
  url: string;
  client: Client;
  /** Another app on the same database, with its own service options. */
  startApp(
    options: Pick<AssistantServiceDeps, "cacheReads" | "typedSchemas"> & Pick<AssistantRouteDeps, "deleteThreadsOf">,
  ): Promise<{ url: string; assistants: AssistantService }>;
  close(): Promise<void>;
}

export async function startAssistantServer(backend: BackendName): Promise<AssistantTestServer> {
  const db = await openDatabase({ ...freshBackend(backend, "asst"), component: "agent" });
  const graphs = await loadTestGraphs();
  const apps: FastifyInstance[] = [];
  // Strictly increasing, so "newest first" never depends on two writes in one millisecond.
  let last = 0;
  const clock = () => new Date((last = Math.max(Date.now(), last + 1)));
  const startApp = async ({
    deleteThreadsOf,
    ...options
  }: Pick<AssistantServiceDeps, "cacheReads" | "typedSchemas"> & Pick<AssistantRouteDeps, "deleteThreadsOf">) => {
    const assistants = new AssistantService({ db, graphs, now: clock, ...options });
    const app = await createHttpServer({ title: "assistants test", version: "0", validationStyle: "message" });
    registerAssistantRoutes(app, { assistants, deleteThreadsOf });
    await app.listen({ host: "127.0.0.1", port: 0 });
    apps.push(app);
    return { app, assistants, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  };
  // As `slipway agent` has it: reads cached when the database is its own.
  const first = await startApp({ cacheReads: !db.shared });
  await first.assistants.ensureSystemAssistants();
  return {
    db,
    graphs,
    assistants: first.assistants,
    app: first.app,
    url: first.url,
    client: new Client({ apiUrl: first.url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    startApp,
    async close() {
      for (const app of apps) await app.close();
      await db.close();
    },
  };
}

/** A raw JSON request, for status codes and error bodies the SDK hides. */
export async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}
