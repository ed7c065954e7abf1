import type { Database } from "../../storage/database.ts";
import type { LanggraphConfig } from "../graphs/langgraph-config.ts";
import { loadEmbeddings } from "./embeddings.ts";
import type { SemanticIndex } from "./semantic-index.ts";
import { SlipwayStore, type StoreLog } from "./store.ts";
import { detectVectorSupport } from "./repository.ts";

/**
 * The store langgraph.json asks for: `store.ttl` (default TTL, refresh on read, sweep
 * interval) and `store.index` (the embeddings model, loaded now so that a broken one
 * stops the start, and how this database scores vectors).
 */
export async function storeFromConfig(db: Database, config: LanggraphConfig, log?: StoreLog): Promise<SlipwayStore> {
  const { index, ttl } = config.store;
  let semantic: SemanticIndex | undefined;
  if (index) {
    const embeddings = await loadEmbeddings(index, config.root);
    semantic = { dims: index.dims, fields: index.fields, embeddings, support: await detectVectorSupport(db) };
  }
  return new SlipwayStore(db, { ttl, index: semantic, log });
}
