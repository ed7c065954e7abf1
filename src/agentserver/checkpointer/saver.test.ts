import { randomUUID } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type Checkpoint, type CheckpointTuple, ERROR, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SlipwaySaver } from "./saver.ts";
import { nextChannelVersion } from "./versions.ts";

/** Puts a checkpoint whose channels `changed` got a new version; returns its config. */
async function step(
  saver: SlipwaySaver,
  parent: RunnableConfig,
  previous: Checkpoint | undefined,
  changed: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): Promise<{ config: RunnableConfig; checkpoint: Checkpoint }> {
  const base = previous ?? emptyCheckpoint();
  const newVersions: Record<string, string> = {};
  const maxVersion = Object.values(base.channel_versions).sort().at(-1) as string | undefined;
  for (const channel of Object.keys(changed)) newVersions[channel] = saver.getNextVersion(maxVersion as never) as never;
  const checkpoint: Checkpoint = {
    ...base,
    id: uuid6(-1),
    ts: new Date().toISOString(),
    channel_values: { ...base.channel_values, ...changed },
    channel_versions: { ...base.channel_versions, ...newVersions },
  };
  const config = await saver.put(parent, checkpoint, { source: "loop", step: 0, parents: {}, ...metadata }, newVersions);
  return { config, checkpoint };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const root = (thread_id: string, checkpoint_ns = ""): RunnableConfig => ({ configurable: { thread_id, checkpoint_ns } });

describe.each(BACKENDS)("SlipwaySaver extras on %s", (backend) => {
  let db: Database;
  let saver: SlipwaySaver;
  const blobCount = async (thread: string) =>
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM checkpoint_blobs WHERE thread_id = $1", [thread]))[0]!.n;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    saver = new SlipwaySaver(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("copyThread copies checkpoints, values and writes, rewriting metadata.thread_id", async () => {
    const from = randomUUID();
    const to = randomUUID();
    const a = await step(saver, root(from), undefined, { items: ["a"] }, { thread_id: from });
    const b = await step(saver, a.config, a.checkpoint, { items: ["a", "b"], other: 1 }, { thread_id: from });
    await saver.putWrites(b.config, [["items", ["c"]]], "task-1");
    const child = await step(saver, root(from, "sub:1"), undefined, { inner: true });

    await saver.copyThread(from, to);
    await saver.deleteThread(from);

    const copied = await all(saver.list({ configurable: { thread_id: to } }));
    expect(copied.map((t) => t.checkpoint.id)).toEqual([child.checkpoint.id, b.checkpoint.id, a.checkpoint.id]);
    const latest = await saver.getTuple(root(to));
    expect(latest?.checkpoint.channel_values).toEqual({ items: ["a", "b"], other: 1 });
    expect(latest?.metadata).toMatchObject({ thread_id: to });
    expect(latest?.pendingWrites).toEqual([["task-1", "items", ["c"]]]);
    expect(latest?.parentConfig).toEqual({ configurable: { thread_id: to, checkpoint_ns: "", checkpoint_id: a.checkpoint.id } });
    expect(await saver.getTuple(root(from))).toBeUndefined();
  });

  it("deleteCheckpointsOfRun removes a run's checkpoints, its writes anywhere, and unused values", async () => {
    const thread = randomUUID();
    const r1 = { metadata: { run_id: "run-1" } };
    const r2 = { metadata: { run_id: "run-2" } };
    const a = await step(saver, { ...root(thread), ...r1 }, undefined, { items: ["a"], big: "x" });
    await saver.putWrites({ ...a.config, ...r1 }, [["items", ["b"]]], "t-a");
    const b = await step(saver, { ...a.config, ...r1 }, a.checkpoint, { items: ["a", "b"] });
    // run-2 resumes on run-1's last checkpoint, then checkpoints in the root and a subgraph.
    await saver.putWrites({ ...b.config, ...r2 }, [["__resume__", "yes"]], "t-b");
    await saver.putWrites({ ...b.config, ...r1 }, [["items", ["kept"]]], "t-c");
    const c = await step(saver, { ...b.config, ...r2 }, b.checkpoint, { items: ["a", "b", "c"], big: "y" });
    await saver.putWrites({ ...c.config, ...r2 }, [["items", ["d"]]], "t-d");
    await step(saver, { ...root(thread, "sub:9"), ...r2 }, undefined, { inner: 1 });
    const before = await blobCount(thread);

    expect(await saver.deleteCheckpointsOfRun(thread, "run-2")).toBe(2);

    const left = await all(saver.list({ configurable: { thread_id: thread } }));
    expect(left.map((t) => t.checkpoint.id)).toEqual([b.checkpoint.id, a.checkpoint.id]);
    expect(left[0]!.checkpoint.channel_values).toEqual({ items: ["a", "b"], big: "x" });
    expect(left[0]!.pendingWrites).toEqual([["t-c", "items", ["kept"]]]);
    expect(left[0]!.metadata).toMatchObject({ run_id: "run-1" });
    // run-2's values (items@c, big@c, inner) are gone; run-1's stay.
    expect(await blobCount(thread)).toBe(before - 3);
    expect(await saver.deleteCheckpointsOfRun(thread, "run-2")).toBe(0);
  });

  it("latestCheckpointMeta reads the newest root checkpoint only", async () => {
    const thread = randomUUID();
    expect(await saver.latestCheckpointMeta(thread)).toBeUndefined();
    const a = await step(saver, root(thread), undefined, { x: 1 }, { source: "input", step: -1, run_id: "r" });
    const b = await step(saver, a.config, a.checkpoint, { x: 2 }, { step: 0, run_id: "r" });
    await step(saver, root(thread, "sub:1"), undefined, { y: 1 });
    expect(await saver.latestCheckpointMeta(thread)).toEqual({
      checkpoint_id: b.checkpoint.id,
      parent_checkpoint_id: a.checkpoint.id,
      metadata: { source: "loop", step: 0, parents: {}, run_id: "r" },
    });
  });

  it("pruneThreadKeepLatest keeps the newest root checkpoint and the subgraph checkpoints under it", async () => {
    const thread = randomUUID();
    const a = await step(saver, root(thread), undefined, { keep: "old value", items: [1] });
    await step(saver, root(thread, "sub:old"), undefined, { inner: "old" }, { parents: { "": a.checkpoint.id } });
    const b = await step(saver, a.config, a.checkpoint, { items: [1, 2] });
    await saver.putWrites(a.config, [["items", [9]]], "t-old");
    await saver.putWrites(b.config, [["__interrupt__", [{ value: "q" }]]], "t-new");
    const sub = await step(saver, root(thread, "sub:new"), undefined, { inner: "new" }, { parents: { "": b.checkpoint.id } });
    const before = await blobCount(thread);

    expect(await saver.pruneThreadKeepLatest(thread)).toBe(2);

    const rootHistory = await all(saver.list(root(thread)));
    expect(rootHistory).toHaveLength(1);
    expect(rootHistory[0]!.checkpoint.id).toBe(b.checkpoint.id);
    expect(rootHistory[0]!.parentConfig).toBeUndefined();
    // "keep" was last written by the deleted checkpoint: its value must survive.
    expect(rootHistory[0]!.checkpoint.channel_values).toEqual({ keep: "old value", items: [1, 2] });
    expect(rootHistory[0]!.pendingWrites).toEqual([["t-new", "__interrupt__", [{ value: "q" }]]]);
    expect((await saver.getTuple(root(thread, "sub:new")))?.checkpoint.id).toBe(sub.checkpoint.id);
    expect(await saver.getTuple(root(thread, "sub:old"))).toBeUndefined();
    expect(await blobCount(thread)).toBe(before - 2); // items@a and inner@old
    expect(await saver.pruneThreadKeepLatest(thread)).toBe(0);
  });

  it("putWrites overwrites special writes and keeps regular ones", async () => {
    const thread = randomUUID();
    const { config } = await step(saver, root(thread), undefined, {});
    await saver.putWrites(
      config,
      [
        ["items", "first"],
        [ERROR, "boom 1"],
      ],
      "t",
    );
    await saver.putWrites(
      config,
      [
        ["items", "second"],
        [ERROR, "boom 2"],
      ],
      "t",
    );
    const tuple = (await saver.getTuple(config)) as CheckpointTuple;
    expect(tuple.pendingWrites).toEqual([
      ["t", ERROR, "boom 2"],
      ["t", "items", "first"],
    ]);
  });

  it("returns pending writes in (task_path, task_id, idx) order", async () => {
    const thread = randomUUID();
    const { config } = await step(saver, root(thread), undefined, {});
    await saver.putWrites(config, [["c", 1]], "task-a", "~__pregel_pull, z");
    await saver.putWrites(
      config,
      [
        ["c", 2],
        ["c", 3],
      ],
      "task-b",
      "~__pregel_pull, a",
    );
    await saver.putWrites(config, [["c", 0]], "task-z");
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites?.map((w) => w[2])).toEqual([0, 2, 3, 1]);
  });

  it("stores config.metadata under the checkpoint metadata, without LangGraph's task keys", async () => {
    const thread = randomUUID();
    const config = {
      ...root(thread),
      metadata: { run_id: "r-1", graph_id: "agent", langgraph_node: "n", langgraph_step: 3, source: "ignored" },
    };
    const { config: saved } = await step(saver, config, undefined, {});
    expect((await saver.getTuple(saved))?.metadata).toEqual({ source: "loop", step: 0, parents: {}, run_id: "r-1", graph_id: "agent" });
    const plain = new SlipwaySaver(db, { inheritConfigMetadata: false });
    const { config: saved2 } = await step(plain, { ...config, ...root(randomUUID()) }, undefined, {});
    expect((await plain.getTuple(saved2))?.metadata).toEqual({ source: "loop", step: 0, parents: {} });
  });

  it("stores metadata holding NUL characters, which jsonb refuses, without them", async () => {
    const thread = randomUUID();
    const { config } = await step(saver, root(thread), undefined, { v: "a\u0000b" }, { note: "x\u0000y", path: "c:\\u0000" });
    const tuple = await saver.getTuple(config);
    expect(tuple?.metadata).toMatchObject({ note: "xy", path: "c:\\u0000" });
    expect(tuple?.checkpoint.channel_values).toEqual({ v: "a\u0000b" });
  });

  it("lists long histories page by page, newest first, across namespaces and threads", async () => {
    const thread = randomUUID();
    const ids: string[] = [];
    for (let i = 0; i < 230; i += 1) {
      const { checkpoint } = await step(saver, root(thread, i % 3 === 0 ? "sub:1" : ""), undefined, { i });
      ids.push(checkpoint.id);
    }
    const everything = await all(saver.list({ configurable: { thread_id: thread } }));
    expect(everything.map((t) => t.checkpoint.id)).toEqual([...ids].reverse());
    expect(everything[0]!.checkpoint.channel_values).toEqual({ i: 229 });
    const rootOnly = await all(saver.list(root(thread), { limit: 150 }));
    expect(rootOnly.map((t) => t.checkpoint.id)).toEqual(
      ids
        .filter((_, i) => i % 3 !== 0)
        .reverse()
        .slice(0, 150),
    );
    const filtered = await all(saver.list({ configurable: {} }, { filter: { step: 0 }, limit: 101 }));
    expect(filtered).toHaveLength(101);
  });
});

describe("nextChannelVersion", () => {
  it("increases the step and stays unique within a step", () => {
    const first = nextChannelVersion(undefined);
    const second = nextChannelVersion(first);
    expect(first).toMatch(/^0{15}1\.\d{16}$/);
    expect(second > first).toBe(true);
    expect(second.localeCompare(first)).toBe(1);
    expect(nextChannelVersion(first)).not.toBe(second);
    expect(nextChannelVersion(41).startsWith("0000000000000042.")).toBe(true);
    expect(nextChannelVersion("00000000000000000000000000000009.0.5")).toMatch(/^0{14}10\./);
  });
});
