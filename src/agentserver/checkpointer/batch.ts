import type { Queryable } from "../../storage/database.ts";
import type { BlobColumns, WriteColumns } from "./codec.ts";
import { PUT_BATCH } from "./sql.ts";

/** A checkpoint to store, encoded. */
export interface CheckpointOp {
  kind: "checkpoint";
  threadId: string;
  ns: string;
  id: string;
  parentId: string | null;
  checkpoint: string;
  metadata: string;
  blobs: BlobColumns;
}

/** One task's pending writes, encoded. */
export interface WritesOp {
  kind: "writes";
  threadId: string;
  ns: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  runId: string | null;
  columns: WriteColumns;
}

export type SaveOp = CheckpointOp | WritesOp;

interface Queued {
  op: SaveOp;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the saver's puts and putWrites: every op waits for one statement
 * (`put_batch`) and resolves once that statement has committed, so a caller learns its
 * data is stored exactly when it did before, and LangGraph's durability modes keep
 * their meaning. What changes is how many ops share a statement: ops arriving in the
 * same turn of the event loop (a step's writes and the checkpoint that follows them),
 * and ops arriving while a statement is under way (other runs), go together.
 *
 * At most `maxInFlight` statements run at once (with more than one, two batches may
 * commit in either order, as calls on different pool connections could before;
 * LangGraph makes each put wait for the previous one). A failed batch is sent again op
 * by op, so one bad value fails its own caller, not its neighbours.
 */
export class SaveBatcher {
  private queue: Queued[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Statements sent and ops carried, for the bench and tests. */
  readonly stats = { statements: 0, ops: 0 };

  constructor(
    private readonly db: Queryable,
    private readonly maxInFlight = 1,
  ) {}

  save(op: SaveOp): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // One turn of the event loop: the checkpoint LangGraph saves after a step's writes joins them.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight++;
    void this.send(batch).finally(() => {
      this.inFlight--;
      // What queued up meanwhile goes at once: it already waited one statement.
      if (this.queue.length > 0) this.flush();
    });
  }

  private async send(batch: Queued[]): Promise<void> {
    try {
      await this.write(batch.map((q) => q.op));
      for (const q of batch) q.resolve();
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error);
      for (const q of batch) {
        await this.write([q.op]).then(q.resolve, q.reject);
      }
    }
  }

  private async write(ops: SaveOp[]): Promise<void> {
    this.stats.statements++;
    this.stats.ops += ops.length;
    await this.db.query(PUT_BATCH, batchParams(ops));
  }
}

/**
 * PUT_BATCH's parameters. Keys repeated within the batch are reduced as the ops
 * would have been applied one after another: a checkpoint put again is replaced; a
 * special write (negative idx) is replaced, a regular one keeps its first value.
 */
export function batchParams(ops: SaveOp[]): unknown[] {
  const checkpoints = new Map<string, CheckpointOp>();
  const writes = new Map<string, { op: WritesOp; i: number }>();
  const blobs: Array<[string, string, string, string, string, Uint8Array]> = [];
  for (const op of ops) {
    if (op.kind === "checkpoint") {
      const key = JSON.stringify([op.threadId, op.ns, op.id]);
      checkpoints.delete(key);
      checkpoints.set(key, op);
      for (let i = 0; i < op.blobs.channels.length; i++) {
        blobs.push([op.threadId, op.ns, op.blobs.channels[i], op.blobs.versions[i], op.blobs.types[i], op.blobs.values[i]]);
      }
    } else {
      for (let i = 0; i < op.columns.idx.length; i++) {
        const idx = op.columns.idx[i];
        const key = JSON.stringify([op.threadId, op.ns, op.checkpointId, op.taskId, idx]);
        if (idx >= 0 && writes.has(key)) continue;
        writes.delete(key);
        writes.set(key, { op, i });
      }
    }
  }
  const cps = [...checkpoints.values()];
  const ws = [...writes.values()];
  return [
    cps.map((c) => c.threadId),
    cps.map((c) => c.ns),
    cps.map((c) => c.id),
    cps.map((c) => c.parentId),
    cps.map((c) => c.checkpoint),
    cps.map((c) => c.metadata),
    blobs.map((b) => b[0]),
    blobs.map((b) => b[1]),
    blobs.map((b) => b[2]),
    blobs.map((b) => b[3]),
    blobs.map((b) => b[4]),
    blobs.map((b) => b[5]),
    ws.map(({ op }) => op.threadId),
    ws.map(({ op }) => op.ns),
    ws.map(({ op }) => op.checkpointId),
    ws.map(({ op }) => op.taskId),
    ws.map(({ op }) => op.taskPath),
    ws.map(({ op }) => op.runId),
    ws.map(({ op, i }) => op.columns.idx[i]),
    ws.map(({ op, i }) => op.columns.channels[i]),
    ws.map(({ op, i }) => op.columns.types[i]),
    ws.map(({ op, i }) => op.columns.values[i]),
  ];
}
