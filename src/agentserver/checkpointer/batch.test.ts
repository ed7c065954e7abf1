import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { SaveBatcher, type CheckpointOp, type WritesOp } from "./batch.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function checkpointOp(threadId: string, id: string, metadata = "{}"): CheckpointOp {
  return {
    kind: "checkpoint",
    threadId,
    ns: "",
    id,
    parentId: null,
    checkpoint: JSON.stringify({ v: 4, id, ts: "", channel_versions: { a: "1" }, versions_seen: {} }),
    metadata,
    blobs: { channels: ["a"], versions: ["1"], types: ["json"], values: [bytes('"x"')] },
  };
}

function writesOp(threadId: string, checkpointId: string, idx: number, value: string): WritesOp {
  return {
    kind: "writes",
    threadId,
    ns: "",
    checkpointId,
    taskId: "task",
    taskPath: "",
    runId: null,
    columns: { idx: [idx], channels: ["a"], types: ["json"], values: [bytes(value)] },
  };
}

describe.each(BACKENDS)("SaveBatcher on %s", (backend) => {
  let db: Database;

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
  });
  afterAll(async () => {
    await db?.close();
  });

  it("stores calls made in one turn with one statement, and each resolves once stored", async () => {
    const batcher = new SaveBatcher(db);
    const thread = randomUUID();
    await Promise.all([batcher.save(checkpointOp(thread, "c1")), batcher.save(writesOp(thread, "c1", 0, '"w"')), batcher.save(checkpointOp(thread, "c2"))]);
    expect(batcher.stats).toEqual({ statements: 1, ops: 3 });
    const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1", [thread]);
    expect(rows[0]!.n).toBe(2);
  });

  it("applies repeated keys in call order: a checkpoint and a special write are replaced, a regular write kept", async () => {
    const batcher = new SaveBatcher(db);
    const thread = randomUUID();
    await Promise.all([
      batcher.save(checkpointOp(thread, "c1", '{"n": 1}')),
      batcher.save(checkpointOp(thread, "c1", '{"n": 2}')),
      batcher.save(writesOp(thread, "c1", 0, '"first"')),
      batcher.save(writesOp(thread, "c1", 0, '"second"')),
      batcher.save(writesOp(thread, "c1", -1, '"first"')),
      batcher.save(writesOp(thread, "c1", -1, '"second"')),
    ]);
    const [cp] = await db.query<{ n: number }>("SELECT (metadata->>'n')::int AS n FROM checkpoints WHERE thread_id = $1", [thread]);
    expect(cp!.n).toBe(2);
    const writes = await db.query<{ idx: number; blob: Uint8Array }>("SELECT idx, blob FROM checkpoint_writes WHERE thread_id = $1 ORDER BY idx", [thread]);
    expect(writes.map((w) => [w.idx, new TextDecoder().decode(w.blob)])).toEqual([
      [-1, '"second"'],
      [0, '"first"'],
    ]);
  });

  it("fails only the call whose data the database refuses", async () => {
    const batcher = new SaveBatcher(db);
    const thread = randomUUID();
    const bad = { ...checkpointOp(thread, "bad"), metadata: "not json" };
    const results = await Promise.allSettled([batcher.save(checkpointOp(thread, "good")), batcher.save(bad)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    const rows = await db.query<{ checkpoint_id: string }>("SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1", [thread]);
    expect(rows.map((r) => r.checkpoint_id)).toEqual(["good"]);
  });

  it("groups what arrives while a statement runs into the next one", async () => {
    const batcher = new SaveBatcher(db);
    const thread = randomUUID();
    const first = batcher.save(checkpointOp(thread, "c0"));
    // Let the first statement go out, then queue ten more behind it.
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 10 }, (_, i) => batcher.save(checkpointOp(thread, `c${i + 1}`)));
    await Promise.all([first, ...rest]);
    expect(batcher.stats).toEqual({ statements: 2, ops: 11 });
  });
});
