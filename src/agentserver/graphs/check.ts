import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { loadAuth } from "../custom-auth/handlers.ts";
import { loadEmbeddings } from "../store/embeddings.ts";
import { prepareProject } from "./project.ts";
import { loadGraphs } from "./registry.ts";

/**
 * `slipway agent --check`: what a start does up to serving, without storage or a port.
 * Reads and validates langgraph.json, applies its env and LANGGRAPH_CONFIG, imports
 * every graph module and builds every graph that is not a factory, against an
 * in-memory checkpointer and store, and loads the `auth.path` and `store.index.embed`
 * modules. Returns the graph ids; throws what a start would.
 */
export async function checkProject(configPath: string): Promise<string[]> {
  // stdout carries the verdict: whatever the graphs log goes to stderr.
  const { config } = prepareProject(configPath, { logFd: 2 });
  if (config.auth) await loadAuth(config.auth.module);
  if (config.store.index) await loadEmbeddings(config.store.index, config.root);
  const graphs = await loadGraphs(config, { checkpointer: new MemorySaver(), store: new InMemoryStore() });
  return graphs.ids();
}
