import { randomUUID } from "node:crypto";
import { Annotation, DeltaChannel, END, START, StateGraph, type BaseChannel } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwaySaver } from "./saver.ts";

/**
 * A run handed the checkpoint its predecessor ended on (StartingPoint) must see the
 * thread as a run that reads it from the database does: the same values, of the same
 * kinds. Only then does a run behave alike whichever way it was claimed.
 */
const State = Annotation.Root({
  when: Annotation<unknown>(),
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  seen: Annotation<string>(),
});

describe("a run's starting point is the thread as stored", () => {
  let db: Database;
  let saver: SlipwaySaver;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
    saver = new SlipwaySaver(db);
  });
  afterAll(() => db?.close());

  /** Two runs on one thread; the second is handed the first's end, or reads the database. */
  async function twoRuns(handOver: boolean, first: (state: typeof State.State) => Partial<typeof State.State>) {
    const threadId = randomUUID();
    let phase = 1;
    const graph = new StateGraph(State)
      .addNode("step", (state) => {
        if (phase === 1) return first(state);
        const when = state.when;
        return { seen: `${when instanceof Date ? "Date" : typeof when} items=${state.items.join(",")}` };
      })
      .addEdge(START, "step")
      .addEdge("step", END)
      .compile({ checkpointer: saver });
    const firstRun = randomUUID();
    const tail = saver.followRun(threadId, firstRun, "async");
    await graph.invoke({}, { configurable: { thread_id: threadId }, metadata: { run_id: firstRun } }).catch(() => undefined);
    const endedOn = tail.endedOn();
    await tail.flush();
    saver.unfollow(tail);

    phase = 2;
    const secondRun = randomUUID();
    const second = saver.followRun(threadId, secondRun, "async", handOver ? endedOn : undefined);
    const values = await graph.invoke({}, { configurable: { thread_id: threadId }, metadata: { run_id: secondRun } });
    await second.flush();
    saver.unfollow(second);
    return values.seen;
  }

  it("gives a Date in the state as the database gives it back (its JSON string)", async () => {
    const first = () => ({ when: new Date("2026-11-26T10:00:00.000Z") });
    const fromDatabase = await twoRuns(false, first);
    const handedOver = await twoRuns(true, first);
    expect(fromDatabase).toBe("string items=");
    expect(handedOver).toBe(fromDatabase);
  });

  it("does not carry over what a failed step changed in place after the last save", async () => {
    const first = (state: typeof State.State) => {
      // A node that changes the state in place, then fails: the change was never saved.
      state.items.push("unsaved");
      throw new Error("failed after changing the state in place");
    };
    const fromDatabase = await twoRuns(false, first);
    const handedOver = await twoRuns(true, first);
    expect(fromDatabase).toBe("undefined items=");
    expect(handedOver).toBe(fromDatabase);
  });

  it("rebuilds a delta channel from a handed-over end as from the database", async () => {
    const DeltaState = Annotation.Root({
      items: new DeltaChannel((state: string[], writes: string[][]) => state.concat(...writes.map((w) => (Array.isArray(w) ? w : [w]))), {
        initialValueFactory: () => [],
      }) as unknown as BaseChannel<string[], string[] | string[][]>,
    });
    const twice = async (handOver: boolean) => {
      const threadId = randomUUID();
      const graph = new StateGraph(DeltaState)
        .addNode("a", (state) => ({ items: [`a${state.items.length}`] }))
        .addEdge(START, "a")
        .addEdge("a", END)
        .compile({ checkpointer: saver });
      const firstRun = randomUUID();
      const tail = saver.followRun(threadId, firstRun, "exit");
      await graph.invoke({ items: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: firstRun }, durability: "exit" });
      const endedOn = tail.endedOn();
      await tail.flush();
      saver.unfollow(tail);
      const secondRun = randomUUID();
      const second = saver.followRun(threadId, secondRun, "exit", handOver ? endedOn : undefined);
      const values = await graph.invoke({ items: ["more"] }, { configurable: { thread_id: threadId }, metadata: { run_id: secondRun }, durability: "exit" });
      await second.flush();
      saver.unfollow(second);
      return values;
    };
    const fromDatabase = await twice(false);
    expect(fromDatabase).toEqual({ items: ["in", "a1", "more", "a3"] });
    expect(await twice(true)).toEqual(fromDatabase);
  });
});
