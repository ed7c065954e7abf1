import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { graphSources, schemaTimeoutMs, StaticGraphSchemas } from "./assistants/graph-schemas/static-schemas.ts";
import { loadProjectAuth } from "./custom-auth/handlers.ts";
import { prepareProjectHttp } from "./http-app/project-http.ts";
import { loadEmbeddings } from "./store/embeddings.ts";
import { prepareProject } from "./graphs/project.ts";
import { loadGraphs } from "./graphs/registry.ts";

/**
 * `slipway agent --check`: what a start does up to serving, without storage or a port.
 * Reads and validates langgraph.json, applies its env and LANGGRAPH_CONFIG, imports
 * every graph module and builds every graph that is not a factory, against an
 * in-memory checkpointer and store, loads the `auth.path` and `store.index.embed`
 * modules, imports `http.app` and bundles `ui`. Returns the graph ids; throws what a
 * start would.
 *
 * Meanwhile it reads the graphs' schemas from their TypeScript types and saves them
 * beside the project, so that a server finds them ready (decision 0013); not with
 * SLIPWAY_CHECK_SCHEMAS=0, as the revision pipeline runs it. A failure or timeout there
 * is logged on stderr and does not fail the check: the served graphs fall back to their
 * run-time schemas.
 */
export async function checkProject(configPath: string): Promise<string[]> {
  // stdout carries the verdict: whatever the graphs log goes to stderr.
  const { config } = prepareProject(configPath, { logFd: 2 });
  // Only warnings and what went wrong are told (stderr stays empty on a clean success).
  const warn = (obj: unknown, msg: string) => {
    const { err, ...fields } = obj as { err?: unknown };
    process.stderr.write(`${JSON.stringify({ level: "warn", msg, ...fields, ...(err ? { err: String((err as Error).message ?? err) } : {}) })}\n`);
  };
  // A missing env file, an older node_version: the build log shows them as warnings.
  for (const message of config.warnings) warn({}, message);
  // The extraction runs in a worker thread, beside the imports below (it never rejects:
  // a failure is a warning). The same bound as a server's: the pipeline gives the whole
  // check 60 s by default.
  // The revision pipeline says 0: a deploy does not wait on the compiler (decision 0013).
  const extract = process.env.SLIPWAY_CHECK_SCHEMAS !== "0";
  const schemas = extract
    ? new StaticGraphSchemas({ root: config.root, sources: graphSources(config), timeoutMs: schemaTimeoutMs(), log: { warn, info: () => undefined } }).load()
    : undefined;
  if (config.store.index) await loadEmbeddings(config.store.index, config.root);
  const graphs = await loadGraphs(config, { checkpointer: new MemorySaver(), store: new InMemoryStore() });
  try {
    if (config.auth) await loadProjectAuth(config.auth, graphs);
    await prepareProjectHttp(config);
    await schemas;
    return graphs.ids();
  } finally {
    await graphs.close();
  }
}
