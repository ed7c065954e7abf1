import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata, CheckpointPendingWrite, CheckpointTuple, PendingWrite } from "@langchain/langgraph-checkpoint";
import { WRITES_IDX_MAP } from "./format.ts";
import type { SaveOp } from "./batch.ts";
import { configOf, type BlobColumns, type TupleRow, type WriteColumns } from "./codec.ts";

/** How long a held save may wait for the run's next save or its end before it is sent alone. */
export const HOLD_MS = 100;

/**
 * The thread's newest root checkpoint when a run starts, known without reading it: the
 * one the thread's previous run ended on, when that run's end claimed this run, or none
 * (`stored` undefined: the thread has no checkpoint). Nothing else can write the thread's
 * checkpoints in between, since it has a run pending or running throughout (state
 * updates are refused).
 *
 * The checkpoint is kept in the form it was stored in, and the run is given it decoded
 * (saver.ts): the previous run's objects themselves would not read as the database gives
 * them back (a Date stays a Date, a class keeps its prototype, a change made in place
 * after the save shows).
 */
export interface StartingPoint {
  stored?: StoredCheckpoint;
}

/**
 * A checkpoint as stored: a row as the database would give it back, plus the values of
 * channels the run did not write (it started with them), which go through the
 * serializer on their own.
 */
export interface StoredCheckpoint {
  row: TupleRow;
  carried: Record<string, unknown>;
}

/**
 * The newest root checkpoint one executing run saved, as it saved it, and (when the
 * run's durability lets a save resolve before it is stored) its last save, held back.
 *
 * A run's end needs both. The thread's snapshot is computed from `tuple()` instead of
 * reading the checkpoint back, and the held save travels in the statement that records
 * the run's end (`finish_run`) instead of one of its own.
 *
 * Holding is for "async" and "exit" durability only: there LangGraph does not wait
 * for a save before it goes on, so a save that lands with the run's end changes what
 * a crash can lose no more than those modes already allow (the run's end is lost with
 * it, and the run is retried). A held save is sent with the run's next save, or alone
 * after HOLD_MS, so a long step never keeps the previous checkpoint from other readers
 * for long. "sync" saves are never held.
 */
export class RunTail {
  private latest?: { checkpoint: Checkpoint; metadata: CheckpointMetadata; parentId: string | null };
  /**
   * Pending writes by checkpoint id, each with its value as stored when seen. A step's
   * writes can be saved before the put of the checkpoint they belong to (LangGraph chains
   * puts, not writes), so they are kept by id.
   */
  private readonly writes = new Map<string, Map<string, { write: CheckpointPendingWrite; stored?: [string, Uint8Array] }>>();
  /** As stored: the newest checkpoint's skeleton and metadata, and each channel's last blob. */
  private latestStored?: { skeleton: string; metadata: string };
  private readonly channelBytes = new Map<string, [string, Uint8Array]>();
  private held: SaveOp[] = [];
  /** Saves released and not yet sent, the send under way, and whether one is scheduled (see release). */
  private releasing: SaveOp[] = [];
  private sending?: Promise<void>;
  private scheduled = false;
  private timer?: NodeJS.Timeout;
  /** A held save that later failed on its own: the run must not end as if it had been stored. */
  failure: unknown;

  constructor(
    readonly threadId: string,
    readonly runId: string,
    readonly holds: boolean,
    private readonly send: (ops: SaveOp[]) => Promise<void>,
    private start?: StartingPoint,
  ) {}

  /**
   * The run's first read of the thread's newest root checkpoint (or of that one by id),
   * answered from the starting point it was given; undefined: ask the database. Once only,
   * and only before the run saved anything: after that the database (or `lend`) knows better.
   */
  startingPoint(ns: string, checkpointId: string | undefined, config: RunnableConfig): StartingPoint | undefined {
    const start = this.start;
    if (!start || this.latest || this.writes.size || ns !== "") return undefined;
    if ((config.metadata?.run_id ?? config.configurable?.run_id) !== this.runId) return undefined;
    if (checkpointId && checkpointId !== start.stored?.row.checkpoint_id) return undefined;
    this.start = undefined;
    return start;
  }

  /** Is this save one of this run's root-graph saves? */
  owns(threadId: string, ns: string, config: RunnableConfig): boolean {
    return threadId === this.threadId && ns === "" && config.metadata?.run_id === this.runId;
  }

  noteCheckpoint(
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    parentId: string | null,
    stored?: { skeleton: string; metadata: string; blobs: BlobColumns },
  ): void {
    this.latest = { checkpoint, metadata, parentId };
    this.latestStored = stored && { skeleton: stored.skeleton, metadata: stored.metadata };
    if (stored) {
      stored.blobs.channels.forEach((channel, i) => {
        this.channelBytes.set(channel, [stored.blobs.types[i], stored.blobs.values[i]]);
      });
    }
    // Ids are time-ordered (uuid6): writes of older checkpoints are no longer wanted.
    for (const id of this.writes.keys()) if (id < checkpoint.id) this.writes.delete(id);
  }

  /** A task's writes, kept as the database keeps them (see dumpWrites, put_batch); `columns`: as stored. */
  noteWrites(checkpointId: string, taskId: string, taskPath: string, writes: PendingWrite[], columns?: WriteColumns): void {
    if (this.latest && checkpointId < this.latest.checkpoint.id) return;
    let kept = this.writes.get(checkpointId);
    if (!kept) this.writes.set(checkpointId, (kept = new Map()));
    for (const [position, [channel, value]] of writes.entries()) {
      const idx = WRITES_IDX_MAP[channel] ?? position;
      // Sorts as the database returns them: by task path, task, then index (negative ones first).
      const key = `${taskPath}\u0000${taskId}\u0000${idx < 0 ? 0 : 1}${String(idx < 0 ? 1e9 + idx : idx).padStart(10, "0")}`;
      if (idx >= 0 && kept.has(key)) continue;
      const at = columns?.idx.indexOf(idx) ?? -1;
      kept.set(key, { write: [taskId, channel, value], stored: at >= 0 ? [columns!.types[at], columns!.values[at]] : undefined });
    }
  }

  /** The newest checkpoint's pending writes, in the database's order. */
  private latestWrites() {
    const kept = this.latest ? this.writes.get(this.latest.checkpoint.id) : undefined;
    return [...(kept?.entries() ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry);
  }

  /**
   * Where the thread's next run starts: the newest root checkpoint as it was stored.
   * Undefined (the next run reads the database) when the run saved none or some part of
   * it was not seen stored.
   */
  endedOn(): StartingPoint | undefined {
    const stored = this.stored();
    return stored && { stored };
  }

  /** The newest root checkpoint as stored; undefined when some part of it was not seen stored. */
  private stored(): StoredCheckpoint | undefined {
    const latest = this.latest;
    const stored = this.latestStored;
    if (!latest || !stored) return undefined;
    const blobs = { channels: [] as string[], types: [] as string[], values: [] as Uint8Array[] };
    const carried: Record<string, unknown> = {};
    for (const [channel, value] of Object.entries(latest.checkpoint.channel_values)) {
      // Stored are the values of versioned channels only (a default never written is not).
      if (value === undefined || latest.checkpoint.channel_versions[channel] === undefined) continue;
      const bytes = this.channelBytes.get(channel);
      if (!bytes) {
        carried[channel] = value;
        continue;
      }
      blobs.channels.push(channel);
      blobs.types.push(bytes[0]);
      blobs.values.push(bytes[1]);
    }
    const writes = { taskIds: [] as string[], channels: [] as string[], types: [] as string[], values: [] as Uint8Array[] };
    for (const {
      write: [taskId, channel],
      stored: bytes,
    } of this.latestWrites()) {
      if (!bytes) return undefined;
      writes.taskIds.push(taskId);
      writes.channels.push(channel);
      writes.types.push(bytes[0]);
      writes.values.push(bytes[1]);
    }
    const row: TupleRow = {
      thread_id: this.threadId,
      checkpoint_ns: "",
      checkpoint_id: latest.checkpoint.id,
      parent_checkpoint_id: latest.parentId,
      checkpoint: JSON.parse(stored.skeleton),
      metadata: stored.metadata,
      blob_channels: blobs.channels,
      blob_types: blobs.types,
      blob_values: blobs.values,
      write_task_ids: writes.taskIds,
      write_channels: writes.channels,
      write_types: writes.types,
      write_values: writes.values,
      send_types: null,
      send_values: null,
    };
    return { row, carried };
  }

  /** The newest root checkpoint as `getTuple` would read it, or undefined when the run saved none. */
  tuple(): CheckpointTuple | undefined {
    const latest = this.latest;
    if (!latest) return undefined;
    const pendingWrites = this.latestWrites().map(({ write }) => write);
    return {
      config: configOf(this.threadId, "", latest.checkpoint.id),
      checkpoint: latest.checkpoint,
      metadata: latest.metadata,
      pendingWrites,
      ...(latest.parentId ? { parentConfig: configOf(this.threadId, "", latest.parentId) } : {}),
    };
  }

  /**
   * `checkpointer`, except that the thread's newest root checkpoint is answered from here:
   * what a graph's getState reads after the run, without a round trip. Undefined when
   * the run saved no checkpoint.
   */
  lend<T extends object>(checkpointer: T & { getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> }): T | undefined {
    const tuple = this.tuple();
    if (!tuple) return undefined;
    const lent = Object.create(checkpointer) as typeof checkpointer;
    lent.getTuple = (config) => {
      const asked = config.configurable ?? {};
      // The newest asked for by name too: delta channels walk their history from it.
      const newest =
        asked.thread_id === this.threadId && (asked.checkpoint_ns ?? "") === "" && (!asked.checkpoint_id || asked.checkpoint_id === tuple.checkpoint.id);
      return newest ? Promise.resolve(tuple) : checkpointer.getTuple(config);
    };
    return lent;
  }

  /** Holds `op` in place of what was held, which is sent now. */
  hold(op: SaveOp): void {
    this.release();
    this.held = [op];
    this.timer = setTimeout(() => this.release(), HOLD_MS);
    this.timer.unref?.();
  }

  /**
   * Sends what is held, after what was sent before (without waiting: see `settled`).
   * LangGraph orders a run's saves by making each wait for the one before; a held save
   * resolved at once, so the order is kept here instead: one send of the run at a time
   * (on a PostgreSQL server two batches in flight could commit in either order), and
   * what is released meanwhile, or in the same turn of the event loop, goes together in
   * the next. After a failure nothing more of the run is sent (a checkpoint stored past a
   * missing one would read back short), and the failure is kept in `failure`.
   */
  release(): void {
    const ops = this.take();
    if (!ops.length) return;
    this.releasing.push(...ops);
    this.pump();
  }

  private pump(): void {
    if (this.sending || this.scheduled || !this.releasing.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const ops = this.releasing;
      this.releasing = [];
      if (this.failure !== undefined || !ops.length) return;
      this.sending = this.send(ops)
        .catch((error) => void (this.failure ??= error))
        .finally(() => {
          this.sending = undefined;
          this.pump();
        });
    });
  }

  /**
   * Waits for the saves released so far. The run's end must not be recorded before
   * them: on a PostgreSQL server they may travel on another connection than the end.
   */
  async settled(): Promise<void> {
    while (this.sending || this.scheduled || this.releasing.length) {
      if (this.sending) await this.sending;
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Hands over what is held, for the statement that records the run's end. */
  take(): SaveOp[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const ops = this.held;
    this.held = [];
    return ops;
  }

  /** Stores saves taken from here (when they could not travel with the run's end) and waits. */
  store(ops: SaveOp[]): Promise<void> {
    return this.send(ops);
  }

  /** Sends what is held and waits for every save sent; throws what any of them failed with. */
  async flush(): Promise<void> {
    this.release();
    await this.settled();
    if (this.failure !== undefined) throw this.failure;
  }
}
