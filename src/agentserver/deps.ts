import type { Database } from "../storage/database.ts";
import type { GraphRegistry } from "./graphs/registry.ts";

/**
 * The infrastructure every agent-server domain may use, built once by
 * `start.ts` (or a test). Domain services are added as they are built.
 */
export interface AgentServerDeps {
  db: Database;
  graphs: GraphRegistry;
  /** Our BaseCheckpointSaver on `db` (src/agentserver/checkpointer). */
  checkpointer: import("./checkpointer/index.ts").SlipwaySaver;
  /** Our BaseStore on `db` (src/agentserver/store). */
  store: import("./store/index.ts").SlipwayStore;
  /** Injected clock and ids for tests. */
  now: () => Date;
  newId: () => string;
}
