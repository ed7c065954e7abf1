import { randomUUID } from "node:crypto";
import { Annotation, Command, DeltaChannel, END, START, StateGraph, interrupt, type BaseChannel } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { HOLD_MS } from "./run-tail.ts";
import { SlipwaySaver } from "./saver.ts";

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** Two steps, then an interrupt: the run's last saves are a checkpoint and its interrupt write. */
function approvalGraph(checkpointer: SlipwaySaver) {
  return new StateGraph(State)
    .addNode("draft", () => ({ items: ["draft"] }))
    .addNode("approve", () => ({ items: [`approved:${interrupt<string, string>("approve?")}`] }))
    .addEdge(START, "draft")
    .addEdge("draft", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer });
}

const LENT = "__pregel_checkpointer";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("a run's tail of saves (%s)", (backend) => {
  let db: Database;
  let saver: SlipwaySaver;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    saver = new SlipwaySaver(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  async function runFollowed(durability: "sync" | "async" | "exit") {
    const threadId = randomUUID();
    const runId = randomUUID();
    const graph = approvalGraph(saver);
    const tail = saver.followRun(threadId, runId, durability);
    await graph.invoke({ items: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: runId }, durability });
    return { threadId, graph, tail };
  }

  it.each(["async", "exit"] as const)("holds the last save back under %s durability, and answers getState as the database will", async (durability) => {
    const { threadId, graph, tail } = await runFollowed(durability);
    const stored = await saver.getTuple({ configurable: { thread_id: threadId } });
    const held = tail.tuple();
    expect(held).toBeDefined();
    expect(stored?.checkpoint.id).not.toBe(held!.checkpoint.id);

    const fromTail = await graph.getState({ configurable: { thread_id: threadId, [LENT]: tail.lend(saver) } });
    await tail.flush();
    saver.unfollow(tail);
    const fromDatabase = await graph.getState({ configurable: { thread_id: threadId } });
    expect(fromDatabase.config.configurable?.checkpoint_id).toBe(held!.checkpoint.id);
    expect(fromTail.values).toEqual({ items: ["in", "draft"] });
    expect(fromTail.values).toEqual(fromDatabase.values);
    expect(fromTail.next).toEqual(["approve"]);
    expect(fromTail.next).toEqual(fromDatabase.next);
    expect(fromTail.tasks.map((t) => [t.id, t.name, t.interrupts.map((i) => i.value)])).toEqual(
      fromDatabase.tasks.map((t) => [t.id, t.name, t.interrupts.map((i) => i.value)]),
    );
    expect(fromTail.tasks[0].interrupts[0].value).toBe("approve?");
    expect(fromTail.metadata?.step).toBe(fromDatabase.metadata?.step);
  });

  it.each(["async", "exit"] as const)("answers a delta channel's history from the held checkpoint too (%s)", async (durability) => {
    const DeltaState = Annotation.Root({
      // A channel rebuilt by walking its writes back from the newest checkpoint, by id.
      items: new DeltaChannel((state: string[], writes: string[][]) => state.concat(...writes.map((w) => (Array.isArray(w) ? w : [w]))), {
        initialValueFactory: () => [],
      }) as unknown as BaseChannel<string[], string[] | string[][]>,
      plain: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    });
    const graph = new StateGraph(DeltaState)
      .addNode("a", () => ({ items: ["a"], plain: ["a"] }))
      .addNode("b", () => ({ items: ["b"], plain: ["b"] }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("b", END)
      .compile({ checkpointer: saver });
    const threadId = randomUUID();
    const runId = randomUUID();
    const tail = saver.followRun(threadId, runId, durability);
    await graph.invoke({ items: ["in"], plain: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: runId }, durability });
    const held = tail.take();
    await tail.settled();
    const fromTail = await graph.getState({ configurable: { thread_id: threadId, [LENT]: tail.lend(saver) } });
    await tail.store(held);
    saver.unfollow(tail);
    const fromDatabase = await graph.getState({ configurable: { thread_id: threadId } });
    expect(fromDatabase.values).toEqual({ items: ["in", "a", "b"], plain: ["in", "a", "b"] });
    expect(fromTail.values).toEqual(fromDatabase.values);
  });

  it("never holds a save under sync durability", async () => {
    const { threadId, tail } = await runFollowed("sync");
    const stored = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(stored?.checkpoint.id).toBe(tail.tuple()!.checkpoint.id);
    expect(tail.take()).toEqual([]);
    saver.unfollow(tail);
  });

  it(`sends a held save on its own after ${HOLD_MS} ms, and when the run is no longer followed`, async () => {
    const first = await runFollowed("async");
    await sleep(HOLD_MS * 3);
    expect((await saver.getTuple({ configurable: { thread_id: first.threadId } }))?.checkpoint.id).toBe(first.tail.tuple()!.checkpoint.id);
    expect(first.tail.take()).toEqual([]);
    saver.unfollow(first.tail);

    const second = await runFollowed("async");
    saver.unfollow(second.tail);
    await sleep(50);
    expect((await saver.getTuple({ configurable: { thread_id: second.threadId } }))?.checkpoint.id).toBe(second.tail.tuple()!.checkpoint.id);
  });

  it("keeps the failure of a held save for the run's end to report", async () => {
    let refuse = false;
    const failing = new SlipwaySaver({
      query: (sql: string, params?: unknown[]) => (refuse && sql.includes("put_batch") ? Promise.reject(new Error("disk full")) : db.query(sql, params)),
      transaction: db.transaction.bind(db),
    } as Pick<Database, "query" | "transaction">);
    const threadId = randomUUID();
    const runId = randomUUID();
    const tail = failing.followRun(threadId, runId, "async");
    await approvalGraph(failing).invoke({ items: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: runId } });
    refuse = true;
    await expect(tail.flush()).rejects.toThrow("disk full");
    tail.release();
    failing.unfollow(tail);
  });

  it("leaves the saves of other runs and of subgraph namespaces alone", async () => {
    const threadId = randomUUID();
    const tail = saver.followRun(threadId, "some-other-run", "async");
    const graph = approvalGraph(saver);
    await graph.invoke({ items: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: randomUUID() } });
    expect(tail.tuple()).toBeUndefined();
    expect(tail.take()).toEqual([]);
    expect((await graph.getState({ configurable: { thread_id: threadId } })).next).toEqual(["approve"]);
    saver.unfollow(tail);
  });

  it("starts the next run from the checkpoint the one before ended on, without reading it, as from the database", async () => {
    const reads: string[] = [];
    const counted = new SlipwaySaver({
      query: (sql: string, params?: unknown[]) => {
        if (sql.includes("checkpoint_tuple(")) reads.push(String(params?.[0]));
        return db.query(sql, params);
      },
      transaction: db.transaction.bind(db),
    } as Pick<Database, "query" | "transaction">);
    // The same two runs twice: the second resumes the first's interrupt, from what the first ended on or from the database.
    // `work` ran beside the interrupted task: its write is a pending write of that checkpoint, so it must not run again.
    let workRuns = 0;
    const twice = async (handOver: boolean) => {
      const threadId = randomUUID();
      workRuns = 0;
      const graph = new StateGraph(State)
        .addNode("work", () => ({ items: [`work:${++workRuns}`] }))
        .addNode("approve", () => ({ items: [`approved:${interrupt<string, string>("approve?")}`] }))
        .addEdge(START, "work")
        .addEdge(START, "approve")
        .compile({ checkpointer: counted });
      const firstRun = randomUUID();
      const first = counted.followRun(threadId, firstRun, "async");
      await graph.invoke({ items: ["in"] }, { configurable: { thread_id: threadId }, metadata: { run_id: firstRun } });
      const endedOn = first.endedOn();
      await first.flush();
      counted.unfollow(first);

      const secondRun = randomUUID();
      const second = counted.followRun(threadId, secondRun, "async", handOver ? endedOn : undefined);
      // Another run's read of the thread is not answered from it.
      await graph.getState({ configurable: { thread_id: threadId } });
      const readsBefore = reads.length;
      const values = await graph.invoke(new Command({ resume: "yes" }), { configurable: { thread_id: threadId }, metadata: { run_id: secondRun } });
      const secondReads = reads.length - readsBefore;
      await second.flush();
      counted.unfollow(second);
      return { values, secondReads, workRuns, state: await graph.getState({ configurable: { thread_id: threadId } }) };
    };
    const fromDatabase = await twice(false);
    const handedOver = await twice(true);
    expect(fromDatabase.secondReads).toBe(1);
    expect(handedOver.secondReads).toBe(0);
    expect([...(handedOver.values.items as string[])].sort()).toEqual(["approved:yes", "in", "work:1"]);
    expect(handedOver.workRuns).toBe(1);
    expect(handedOver.values).toEqual(fromDatabase.values);
    expect(handedOver.state.next).toEqual([]);
    expect(handedOver.state.metadata?.step).toBe(fromDatabase.state.metadata?.step);
  });

  it("answers only the first read of its own run at the root, of the newest or that checkpoint", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    const start = {};
    const own = { configurable: { thread_id: threadId }, metadata: { run_id: runId } };
    const tail = saver.followRun(threadId, runId, "async", start);
    expect(tail.startingPoint("", undefined, { configurable: { thread_id: threadId }, metadata: { run_id: "other" } })).toBeUndefined();
    expect(tail.startingPoint("child:1", undefined, own)).toBeUndefined();
    expect(tail.startingPoint("", "some-id", own)).toBeUndefined();
    expect(tail.startingPoint("", undefined, own)).toBe(start);
    expect(tail.startingPoint("", undefined, own)).toBeUndefined();
    saver.unfollow(tail);
  });
});
