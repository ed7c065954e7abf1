import { type CheckpointSaverTestInitializer, deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwaySaver } from "./saver.ts";

// The official suite is written against vitest's globals; our config does not turn
// them on, so hand them over before it registers its tests.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });

for (const backend of BACKENDS) {
  let db: Database | undefined;
  const initializer: CheckpointSaverTestInitializer<SlipwaySaver> = {
    checkpointerName: `SlipwaySaver on ${backend}`,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    },
    async afterAll() {
      await db?.close();
    },
    // One database per back end; each checkpointer starts from empty tables.
    async createCheckpointer() {
      for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]) await db!.query(`DELETE FROM ${table}`);
      return new SlipwaySaver(db!);
    },
  };
  validate(initializer);
  // Opt-in upstream (not part of validate): the DeltaChannel ancestor walk, which
  // depends on pending writes coming back in (task_path, task_id, idx) order.
  deltaChannelHistoryTests(initializer);
}
