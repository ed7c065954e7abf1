import { randomUUID } from "node:crypto";
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwaySaver } from "./saver.ts";

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  count: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
});
type S = typeof State.State;

function counterGraph(checkpointer: SlipwaySaver) {
  return new StateGraph(State)
    .addNode("add", (s: S) => ({ items: [`step${s.count + 1}`], count: s.count + 1 }))
    .addEdge(START, "add")
    .addEdge("add", END)
    .compile({ checkpointer });
}

function approvalGraph(checkpointer: SlipwaySaver) {
  return new StateGraph(State)
    .addNode("draft", () => ({ items: ["draft"] }))
    .addNode("approve", () => {
      const answer = interrupt<string, string>("approve?");
      return { items: [`approved:${answer}`] };
    })
    .addEdge(START, "draft")
    .addEdge("draft", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer });
}

function graphWithInterruptedSubgraph(checkpointer: SlipwaySaver) {
  const inner = new StateGraph(State)
    .addNode("ask", () => ({ items: [`inner:${interrupt<string, string>("name?")}`] }))
    .addEdge(START, "ask")
    .compile();
  return new StateGraph(State)
    .addNode("first", () => ({ items: ["first"] }))
    .addNode("inner", async (s: S) => {
      const out = await inner.invoke({ count: s.count });
      return { items: out.items };
    })
    .addEdge(START, "first")
    .addEdge("first", "inner")
    .addEdge("inner", END)
    .compile({ checkpointer });
}

describe.each(BACKENDS)("graphs on SlipwaySaver (%s)", (backend) => {
  let db: Database;
  let saver: SlipwaySaver;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    saver = new SlipwaySaver(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("accumulates state across invocations of one thread", async () => {
    const graph = counterGraph(saver);
    const config = { configurable: { thread_id: randomUUID() } };
    expect(await graph.invoke({ items: ["hello"] }, config)).toEqual({ items: ["hello", "step1"], count: 1 });
    expect(await graph.invoke({ items: ["again"] }, config)).toEqual({
      items: ["hello", "step1", "again", "step2"],
      count: 2,
    });
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    // Per invocation: the input checkpoint, then one per step (START, add).
    expect(history.map((h) => h.metadata?.source)).toEqual(["loop", "loop", "input", "loop", "loop", "input"]);
    // A fresh thread starts from nothing.
    expect(await graph.invoke({ items: [] }, { configurable: { thread_id: randomUUID() } })).toEqual({
      items: ["step1"],
      count: 1,
    });
  });

  it("pauses on interrupt() and resumes with Command({ resume })", async () => {
    const graph = approvalGraph(saver);
    const config = { configurable: { thread_id: randomUUID() } };
    const paused = (await graph.invoke({ items: ["start"] }, config)) as S & { __interrupt__?: { value: unknown }[] };
    expect(paused.items).toEqual(["start", "draft"]);
    expect(paused.__interrupt__?.[0]?.value).toBe("approve?");
    const state = await graph.getState(config);
    expect(state.next).toEqual(["approve"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");

    expect(await graph.invoke(new Command({ resume: "yes" }), config)).toEqual({
      items: ["start", "draft", "approved:yes"],
      count: 0,
    });
    expect((await graph.getState(config)).next).toEqual([]);
  });

  it("keeps branches apart when a run starts from an older checkpoint", async () => {
    const graph = counterGraph(saver);
    const config = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ items: ["a"] }, config);
    const afterFirst = (await graph.getState(config)).config;
    await graph.invoke({ items: ["b"] }, config);
    const mainBranch = (await graph.getState(config)).config;

    // Same steps, same counts as the main branch's second run: LangGraph's integer
    // versions would collide here and the fork would read the main branch's values.
    const forked = await graph.invoke({ items: ["c"] }, afterFirst);
    expect(forked).toEqual({ items: ["a", "step1", "c", "step2"], count: 2 });
    expect((await graph.getState(mainBranch)).values).toEqual({ items: ["a", "step1", "b", "step2"], count: 2 });
    expect((await graph.getState(config)).values).toEqual(forked);

    await graph.updateState(mainBranch, { items: ["edited"] });
    expect((await graph.getState(config)).values.items).toEqual(["a", "step1", "b", "step2", "edited"]);
  });

  it("rolls a run back and continues from the state before it", async () => {
    const graph = counterGraph(saver);
    const thread_id = randomUUID();
    await graph.invoke({ items: ["one"] }, { configurable: { thread_id }, metadata: { run_id: "run-1" } });
    await graph.invoke({ items: ["two"] }, { configurable: { thread_id }, metadata: { run_id: "run-2" } });

    expect(await saver.deleteCheckpointsOfRun(thread_id, "run-2")).toBe(3);
    const config = { configurable: { thread_id } };
    expect((await graph.getState(config)).values).toEqual({ items: ["one", "step1"], count: 1 });
    const again = await graph.invoke({ items: ["three"] }, { configurable: { thread_id }, metadata: { run_id: "run-3" } });
    expect(again).toEqual({ items: ["one", "step1", "three", "step2"], count: 2 });
    expect((await saver.latestCheckpointMeta(thread_id))?.metadata).toMatchObject({ run_id: "run-3", source: "loop" });
  });

  it("rolls back a resumed run, leaving the interrupt pending again", async () => {
    const graph = approvalGraph(saver);
    const thread_id = randomUUID();
    await graph.invoke({ items: ["start"] }, { configurable: { thread_id }, metadata: { run_id: "ask" } });
    // The resuming run writes its resume value and task results on the "ask" run's checkpoint.
    await graph.invoke(new Command({ resume: "no" }), { configurable: { thread_id }, metadata: { run_id: "answer" } });

    expect(await saver.deleteCheckpointsOfRun(thread_id, "answer")).toBeGreaterThan(0);
    const state = await graph.getState({ configurable: { thread_id } });
    expect(state.next).toEqual(["approve"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");
    const done = await graph.invoke(new Command({ resume: "yes" }), { configurable: { thread_id } });
    expect(done.items).toEqual(["start", "draft", "approved:yes"]);
  });

  it("resumes an interrupted subgraph after the thread was pruned to its latest checkpoint", async () => {
    const graph = graphWithInterruptedSubgraph(saver);
    const config = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ items: ["go"] }, config);
    const paused = await graph.getState(config, { subgraphs: true });
    expect(paused.next).toEqual(["inner"]);

    expect(await saver.pruneThreadKeepLatest(config.configurable.thread_id)).toBeGreaterThan(0);
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    expect(history).toHaveLength(1);

    const done = await graph.invoke(new Command({ resume: "ada" }), config);
    expect(done.items).toEqual(["go", "first", "inner:ada"]);
  });

  it("copies a thread that then lives on its own", async () => {
    const graph = counterGraph(saver);
    const from = { configurable: { thread_id: randomUUID() } };
    const to = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ items: ["x"] }, from);
    await saver.copyThread(from.configurable.thread_id, to.configurable.thread_id);
    await graph.invoke({ items: ["y"] }, to);
    expect((await graph.getState(from)).values.items).toEqual(["x", "step1"]);
    expect((await graph.getState(to)).values.items).toEqual(["x", "step1", "y", "step2"]);
  });
});
