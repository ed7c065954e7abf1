import { randomBytes } from "node:crypto";
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwayStore } from "./store.ts";

const State = Annotation.Root({
  user: Annotation<string>,
  visits: Annotation<number>,
  notes: Annotation<string[]>,
});

/** A graph that counts a user's visits in long-term memory through `config.store`. */
function visitCounter(store: SlipwayStore) {
  return new StateGraph(State)
    .addNode("remember", async (state: typeof State.State, config: LangGraphRunnableConfig) => {
      const memory = config.store!;
      const prior = await memory.get([state.user, "stats"], "visits");
      const visits = Number(prior?.value.count ?? 0) + 1;
      // Issued in one tick, these reach our batch() together through LangGraph's batching wrapper.
      await Promise.all([
        memory.put([state.user, "stats"], "visits", { count: visits }),
        memory.put([state.user, "notes"], `visit-${visits}`, { text: `visit ${visits}` }),
      ]);
      const notes = await memory.search([state.user, "notes"], { limit: 100 });
      return { visits, notes: notes.map((item) => String(item.value.text)).sort() };
    })
    .addEdge(START, "remember")
    .addEdge("remember", END)
    .compile({ store });
}

describe.each(BACKENDS)("a graph using SlipwayStore on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
  });
  afterAll(async () => db?.close());

  it("puts and gets through config.store inside a node", async () => {
    const store = new SlipwayStore(db);
    const graph = visitCounter(store);
    const user = `u${randomBytes(4).toString("hex")}`;

    const first = await graph.invoke({ user });
    expect(first.visits).toBe(1);
    expect(first.notes).toEqual(["visit 1"]);

    const second = await graph.invoke({ user });
    expect(second.visits).toBe(2);
    expect(second.notes).toEqual(["visit 1", "visit 2"]);

    expect((await store.get([user, "stats"], "visits"))?.value).toEqual({ count: 2 });
    expect(await store.listNamespaces({ prefix: [user] })).toEqual([
      [user, "notes"],
      [user, "stats"],
    ]);
  });
});
