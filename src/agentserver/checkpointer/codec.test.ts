import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type Checkpoint, type CheckpointMetadata, JsonPlusSerializer, TASKS } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { checkpointJson, decodeTuple, dumpBlobs, dumpWrites, metadataJson, runIdOf, type TupleRow, withConfigMetadata } from "./codec.ts";

/** The codec beside the saver: what goes into the columns, and what comes back out of a row. */
const serde = new JsonPlusSerializer();
const nextVersion = (current: number | string | undefined) => (typeof current === "number" ? current + 1 : 1);

const row = (fields: Partial<TupleRow>): TupleRow => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint_id: "c2",
  parent_checkpoint_id: null,
  checkpoint: { v: 4, id: "c2", ts: "2026-11-26T00:00:00.000Z", channel_versions: {}, versions_seen: {} },
  metadata: "{}",
  blob_channels: null,
  blob_types: null,
  blob_values: null,
  write_task_ids: null,
  write_channels: null,
  write_types: null,
  write_values: null,
  send_types: null,
  send_values: null,
  ...fields,
});

describe("the checkpointer's codec", () => {
  it("stores a checkpoint's skeleton without its channel values", () => {
    const checkpoint = { v: 4, id: "c1", ts: "x", channel_values: { messages: ["big"] }, channel_versions: { messages: 2 }, versions_seen: {} } as Checkpoint;
    expect(JSON.parse(checkpointJson(checkpoint))).toEqual({ v: 4, id: "c1", ts: "x", channel_versions: { messages: 2 }, versions_seen: {} });
  });

  it("dumps only the channels with a new version, and none for a channel emptied", async () => {
    const blobs = await dumpBlobs(serde, { messages: [new HumanMessage("hi")], kept: 1, emptied: undefined }, { messages: 3, emptied: 2 });
    expect(blobs.channels).toEqual(["messages"]);
    expect(blobs.versions).toEqual(["3"]);
    const [loaded] = (await serde.loadsTyped(blobs.types[0], blobs.values[0])) as HumanMessage[];
    expect(loaded).toBeInstanceOf(HumanMessage);
    expect(loaded.content).toBe("hi");
  });

  it("gives special channels their fixed negative index, the last of a repeated one winning", async () => {
    const writes = await dumpWrites(serde, [
      ["answer", "a"],
      ["__interrupt__", "first"],
      ["notes", "b"],
      ["__interrupt__", "second"],
    ]);
    expect(writes.idx).toEqual([0, -3, 2]);
    expect(writes.channels).toEqual(["answer", "__interrupt__", "notes"]);
    expect(await serde.loadsTyped(writes.types[1], writes.values[1])).toBe("second");
  });

  it("writes metadata as JSON that jsonb accepts: NUL escapes dropped, LangChain objects kept", async () => {
    const text = await metadataJson(serde, {
      source: "input",
      step: -1,
      parents: {},
      note: "a\u0000b",
      message: new AIMessage("x"),
    } as unknown as CheckpointMetadata);
    expect(text).not.toContain("\\u0000");
    const back = (await serde.loadsTyped("json", text)) as Record<string, unknown>;
    expect(back.note).toBe("ab");
    expect(back.message).toBeInstanceOf(AIMessage);
  });

  it("puts the caller's metadata under LangGraph's, without the per-task bookkeeping keys but with thread_id", () => {
    const merged = withConfigMetadata(
      { metadata: { run_id: "r1", thread_id: "t1", langgraph_node: "agent", checkpoint_ns: "x", source: "caller", skipped: undefined } },
      { source: "loop", step: 1, parents: {} } as CheckpointMetadata,
    );
    expect(merged).toEqual({ run_id: "r1", thread_id: "t1", source: "loop", step: 1, parents: {} });
    const untouched = { source: "loop", step: 1, parents: {} } as CheckpointMetadata;
    expect(withConfigMetadata({}, untouched)).toBe(untouched);
  });

  it("reads a run id only when the caller gave a non-empty string", () => {
    expect(runIdOf({ metadata: { run_id: "r1" } })).toBe("r1");
    expect(runIdOf({ metadata: { run_id: "" } })).toBeNull();
    expect(runIdOf({ metadata: { run_id: 7 } })).toBeNull();
    expect(runIdOf({})).toBeNull();
  });

  it("rebuilds a tuple from a row: values, pending writes, metadata and parent", async () => {
    const [blobType, blobBytes] = await serde.dumpsTyped([new HumanMessage("hi")]);
    const [writeType, writeBytes] = await serde.dumpsTyped("pending");
    const tuple = await decodeTuple(
      serde,
      row({
        parent_checkpoint_id: "c1",
        metadata: JSON.stringify({ source: "loop", step: 0 }),
        blob_channels: ["messages"],
        blob_types: [blobType],
        blob_values: [blobBytes],
        write_task_ids: ["task-1"],
        write_channels: ["answer"],
        write_types: [writeType],
        write_values: [writeBytes],
      }),
      nextVersion,
    );
    expect(tuple.config).toEqual({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c2" } });
    expect(tuple.parentConfig).toEqual({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1" } });
    expect((tuple.checkpoint.channel_values.messages as HumanMessage[])[0]).toBeInstanceOf(HumanMessage);
    expect(tuple.pendingWrites).toEqual([["task-1", "answer", "pending"]]);
    expect(tuple.metadata).toEqual({ source: "loop", step: 0 });
    expect(await decodeTuple(serde, row({}), nextVersion)).not.toHaveProperty("parentConfig");
  });

  it("moves an old checkpoint's pending sends into the tasks channel, at the newest version", async () => {
    const [type, bytes] = await serde.dumpsTyped({ node: "agent", args: { x: 1 } });
    const tuple = await decodeTuple(
      serde,
      row({ checkpoint: { v: 1, id: "c2", ts: "x", channel_versions: { a: 3, b: 5 }, versions_seen: {} }, send_types: [type], send_values: [bytes] }),
      nextVersion,
    );
    expect(tuple.checkpoint.channel_values[TASKS]).toEqual([{ node: "agent", args: { x: 1 } }]);
    expect(tuple.checkpoint.channel_versions[TASKS]).toBe(5);
    const fresh = await decodeTuple(serde, row({ send_types: [type], send_values: [bytes] }), nextVersion);
    expect(fresh.checkpoint.channel_versions[TASKS]).toBe(1);
  });
});
