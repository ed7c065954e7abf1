import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { jsonPlusAtFirstUse, loadCheckpointPackage } from "./checkpoint-package.ts";
import { getCheckpointId } from "./format.ts";
import type { Database, Queryable } from "../../storage/database.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import { type TupleRow, checkpointJson, decodeTuple, dumpBlobs, dumpWrites, metadataJson, runIdOf, withConfigMetadata } from "./codec.ts";
import { COLLECT_BLOBS, COPY_THREAD, DELETE_RUN, DELETE_THREAD, DETACH_LATEST_ROOT, GET_TUPLE, LATEST_META, listPage, PRUNE_KEEP_LATEST } from "./sql.ts";
import { SaveBatcher, type SaveOp } from "./batch.ts";
import { withForeignBlobs } from "./foreign-blobs.ts";
import { RunTail, type StartingPoint, type StoredCheckpoint } from "./run-tail.ts";
import { nextChannelVersion } from "./versions.ts";

export interface SlipwaySaverOptions {
  /** Serializer for channel values and writes; LangGraph's JsonPlusSerializer by default. */
  serde?: SerializerProtocol;
  /**
   * Store `config.metadata` (minus LangGraph's bookkeeping keys) under each
   * checkpoint's metadata, as LangGraph Platform does; `deleteCheckpointsOfRun`
   * relies on the run_id it brings. Default true.
   */
  inheritConfigMetadata?: boolean;
  /**
   * How many `put_batch` statements may run at once (see batch.ts); what arrives while
   * that many run waits for the next one. Default: 1 on PGlite (one connection, which
   * runs one statement at a time anyway), 4 on a PostgreSQL server, where a run's
   * checkpoint waiting for another batch's commit (an fsync) would lengthen every run.
   */
  maxBatchesInFlight?: number;
}

/** What `latestCheckpointMeta` returns: enough to answer "where is this thread?". */
export interface CheckpointHead {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  /** The stored JSON as is (not passed through the serializer). */
  metadata: Record<string, unknown>;
}

/** Rows per query when `list` streams a long history. */
const LIST_PAGE_SIZE = 100;

/**
 * LangGraph checkpointer on Slipway's storage (PGlite or a PostgreSQL server).
 * Passes `@langchain/langgraph-checkpoint-validation`.
 *
 * Graphs may be built with another copy of `@langchain/langgraph` than ours, so
 * the saver only relies on the data LangGraph passes to its methods, never on the
 * caller's classes.
 *
 * It implements `BaseCheckpointSaver` rather than extending it: the base class's module
 * brings all of `@langchain/core`, which is imported at the first checkpoint instead of at
 * every start (checkpoint-package.ts). LangGraph only calls the saver's methods (it has
 * no `instanceof` check); the base class's own methods are borrowed from its prototype at
 * first use, and format.test.ts checks that none is missing.
 *
 * @example
 * ```ts
 * const db = await openDatabase({ dataDir: ".slipway", schema: "agent", component: "agent" });
 * const checkpointer = new SlipwaySaver(db);
 * const graph = builder.compile({ checkpointer });
 * await graph.invoke(input, { configurable: { thread_id }, metadata: { run_id } });
 * ```
 */
export class SlipwaySaver implements BaseCheckpointSaver<number> {
  serde: SerializerProtocol;
  // TS-private rather than #private: a Proxy around the saver (instrumentation) keeps working.
  private readonly db: Pick<Database, "query" | "transaction">;
  private readonly inheritConfigMetadata: boolean;
  /** put and putWrites go through it: one statement per group of calls. */
  readonly batcher: SaveBatcher;
  /** Runs executing here whose end wants their last checkpoint (run-tail.ts), by thread. */
  private readonly tails = new Map<string, RunTail>();

  constructor(db: Pick<Database, "query" | "transaction">, options: SlipwaySaverOptions = {}) {
    // Python graphs' values (decision 0036) pass through whichever serializer is given.
    this.serde = withForeignBlobs(options.serde ?? jsonPlusAtFirstUse());
    this.db = db;
    this.inheritConfigMetadata = options.inheritConfigMetadata ?? true;
    const server = (db as Partial<Database>).kind === "postgres";
    this.batcher = new SaveBatcher(db, options.maxBatchesInFlight ?? (server ? 4 : 1));
  }

  /**
   * This saver's reads and writes inside the transaction `tx`: a state update writes its
   * checkpoint under the thread lock that run creation also takes (threads/state-service.ts).
   * Runs followed by this saver are not seen from it.
   */
  within(tx: Queryable): SlipwaySaver {
    return new SlipwaySaver(
      { query: <Row>(sql: string, params?: readonly unknown[]) => tx.query<Row>(sql, params), transaction: (work) => work(tx) },
      { serde: this.serde, inheritConfigMetadata: this.inheritConfigMetadata, maxBatchesInFlight: 1 },
    );
  }

  /** As BaseCheckpointSaver's: `JSON.stringify` of a config holding the saver does not walk the database client. */
  toJSON(): string {
    return `[${this.constructor.name}]`;
  }

  async get(config: RunnableConfig): Promise<Checkpoint | undefined> {
    const { BaseCheckpointSaver } = await loadCheckpointPackage();
    return BaseCheckpointSaver.prototype.get.call(this, config);
  }

  async getDeltaChannelHistory(
    options: Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0],
  ): ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]> {
    const { BaseCheckpointSaver } = await loadCheckpointPackage();
    return BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(this, options);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null || threadId === "") return undefined;
    const ns = String(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = getCheckpointId(config);
    const known = this.tails.get(String(threadId))?.startingPoint(ns, checkpointId, config);
    // Answered here: none when the thread has no checkpoint, else decoded from the form it was stored in.
    if (known) return known.stored ? this.decodeStored(known.stored) : undefined;
    const rows = await this.db.query<TupleRow>(GET_TUPLE, [String(threadId), ns, checkpointId || null]);
    return rows[0] ? this.decode(rows[0]) : undefined;
  }

  /**
   * Checkpoints newest first. `config.configurable` narrows by thread_id,
   * checkpoint_ns (only when given: all namespaces otherwise) and checkpoint_id;
   * `filter` keeps checkpoints whose metadata contains it (jsonb `@>` on the json column); `before`
   * keeps ids below its checkpoint_id. Long histories are fetched a page at a time.
   */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before, limit } = options;
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: (param: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns;
    const checkpointId = getCheckpointId(config);
    const beforeId = before ? getCheckpointId(before) : "";
    const oneThread = threadId !== undefined && threadId !== null && threadId !== "";
    const oneNamespace = ns !== undefined && ns !== null;
    if (oneThread) add((p) => `c.thread_id = ${p}`, String(threadId));
    if (oneNamespace) add((p) => `c.checkpoint_ns = ${p}`, String(ns));
    if (checkpointId) add((p) => `c.checkpoint_id = ${p}`, checkpointId);
    if (filter && Object.keys(filter).length > 0) add((p) => `c.metadata::jsonb @> ${p}::jsonb`, jsonbText(filter));
    if (beforeId) add((p) => `c.checkpoint_id < ${p}`, beforeId);
    // With thread and namespace fixed, the id alone orders the rows and bounds the index scan.
    const idOnlyCursor = oneThread && oneNamespace;

    let remaining = limit === undefined || !Number.isFinite(Number(limit)) ? Infinity : Math.max(0, Math.floor(Number(limit)));
    let cursor: TupleRow | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(remaining, LIST_PAGE_SIZE);
      const pageWhere = [...where];
      const pageParams = [...params];
      if (cursor && idOnlyCursor) {
        pageParams.push(cursor.checkpoint_id);
        pageWhere.push(`c.checkpoint_id < $${pageParams.length}`);
      } else if (cursor) {
        pageParams.push(cursor.checkpoint_id, cursor.thread_id, cursor.checkpoint_ns);
        const n = pageParams.length;
        pageWhere.push(`(c.checkpoint_id, c.thread_id, c.checkpoint_ns) < ($${n - 2}, $${n - 1}, $${n})`);
      }
      pageParams.push(pageSize);
      const rows = await this.db.query<TupleRow>(listPage(pageWhere, `$${pageParams.length}`), pageParams);
      for (const row of rows) yield await this.decode(row);
      if (rows.length < pageSize) return;
      remaining -= rows.length;
      cursor = rows[rows.length - 1];
    }
  }

  /**
   * Stores a checkpoint and the values of the channels in `newVersions`; resolves once
   * committed. Shares its statement with the calls around it (batch.ts).
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Failed to put checkpoint: config has no "configurable".');
    const { thread_id, checkpoint_id } = config.configurable;
    const checkpoint_ns = String(config.configurable.checkpoint_ns ?? "");
    if (thread_id === undefined || thread_id === null || thread_id === "") {
      throw new Error('Failed to put checkpoint: config.configurable has no "thread_id".');
    }
    const stored = this.inheritConfigMetadata ? withConfigMetadata(config, metadata) : metadata;
    const [blobs, metadataText] = await Promise.all([dumpBlobs(this.serde, checkpoint.channel_values, newVersions), metadataJson(this.serde, stored)]);
    const op: SaveOp = {
      kind: "checkpoint",
      threadId: String(thread_id),
      ns: checkpoint_ns,
      id: checkpoint.id,
      parentId: checkpoint_id || null,
      checkpoint: checkpointJson(checkpoint),
      metadata: metadataText,
      blobs,
    };
    const tail = this.tailOf(op.threadId, checkpoint_ns, config);
    tail?.noteCheckpoint(checkpoint, stored, op.parentId, { skeleton: op.checkpoint, metadata: op.metadata, blobs });
    await this.save(op, tail);
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /**
   * Stores a task's writes against a checkpoint (see put_writes in migration 0002 for
   * conflicts); resolves once committed, in a statement shared as put's is.
   */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined || threadId === null || threadId === "") {
      throw new Error('Failed to put writes: config.configurable has no "thread_id".');
    }
    if (checkpointId === undefined || checkpointId === null || checkpointId === "") {
      throw new Error('Failed to put writes: config.configurable has no "checkpoint_id".');
    }
    if (writes.length === 0) return;
    const op: SaveOp = {
      kind: "writes",
      threadId: String(threadId),
      ns: String(config.configurable?.checkpoint_ns ?? ""),
      checkpointId: String(checkpointId),
      taskId,
      taskPath: taskPath ?? "",
      runId: runIdOf(config),
      columns: await dumpWrites(this.serde, writes),
    };
    const tail = this.tailOf(op.threadId, op.ns, config);
    tail?.noteWrites(op.checkpointId, taskId, op.taskPath, writes, op.columns);
    await this.save(op, tail);
  }

  /**
   * Follows one run's root-graph saves until `unfollow` (see run-tail.ts): for its
   * snapshot at the end and, unless its durability is "sync", to hold back its last save.
   * With `start`, the run's first read of the thread is answered from it.
   */
  followRun(threadId: string, runId: string, durability: "sync" | "async" | "exit" | undefined, start?: StartingPoint): RunTail {
    const send = (ops: SaveOp[]) => Promise.all(ops.map((op) => this.batcher.save(op))).then(() => undefined);
    const tail = new RunTail(threadId, runId, durability !== "sync", send, start);
    this.tails.set(threadId, tail);
    return tail;
  }

  /** Stops following; sends whatever the run still held (a failure is in `tail.failure`). */
  unfollow(tail: RunTail): void {
    tail.release();
    if (this.tails.get(tail.threadId) === tail) this.tails.delete(tail.threadId);
  }

  private tailOf(threadId: string, ns: string, config: RunnableConfig): RunTail | undefined {
    const tail = this.tails.get(threadId);
    return tail?.owns(threadId, ns, config) ? tail : undefined;
  }

  /** A save of a followed run that may be held is held; any other save of that thread sends what was held first. */
  private async save(op: SaveOp, tail: RunTail | undefined): Promise<void> {
    if (tail?.holds) return tail.hold(op);
    this.tails.get(op.threadId)?.release();
    await this.batcher.save(op);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.db.query(DELETE_THREAD, [threadId]);
  }

  /**
   * Unique channel versions (see versions.ts). LangGraph accepts string versions;
   * the signature stays the base class's so the saver fits `compile({ checkpointer })`.
   */
  getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current as number | string | undefined) as unknown as number;
  }

  /**
   * Copies every checkpoint, blob and pending write of `fromThreadId` to
   * `toThreadId` (a thread with no checkpoints yet), in one statement. Ids are
   * kept; `metadata.thread_id` is rewritten where it named the source thread.
   */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    await this.db.query(COPY_THREAD, [fromThreadId, toThreadId]);
  }

  /**
   * Undoes a run for the `rollback` multitask strategy: deletes the checkpoints
   * whose `metadata.run_id` is `runId` (every namespace), their pending writes, the
   * writes the run left on earlier checkpoints (a resumed run writes there), and
   * the channel values nothing refers to any more. Call it once the run's worker
   * has stopped: a put racing the cleanup may lose a shared value.
   *
   * @returns how many checkpoints were deleted.
   */
  async deleteCheckpointsOfRun(threadId: string, runId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<{ deleted: number }>(DELETE_RUN, [threadId, runId]);
      await tx.query(COLLECT_BLOBS, [threadId]);
      return row?.deleted ?? 0;
    });
  }

  /**
   * The newest checkpoint of the thread's root graph, without loading values or
   * writes: one index probe. `undefined` when the thread has no checkpoint.
   */
  async latestCheckpointMeta(threadId: string): Promise<CheckpointHead | undefined> {
    const [row] = await this.db.query<CheckpointHead>(LATEST_META, [threadId]);
    return row;
  }

  /**
   * `POST /threads/prune` with `keep_latest`: keeps the newest root checkpoint
   * (with its pending writes, so an interrupt can still be resumed) and the
   * subgraph checkpoints taken under it; deletes the rest of the history and the
   * values only it used. The kept checkpoint loses its (deleted) parent link.
   * Same caveat as `deleteCheckpointsOfRun`: not while a run writes to the thread.
   *
   * @returns how many checkpoints were deleted.
   */
  async pruneThreadKeepLatest(threadId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<{ deleted: number }>(PRUNE_KEEP_LATEST, [threadId]);
      const deleted = row?.deleted ?? 0;
      if (deleted > 0) {
        await tx.query(DETACH_LATEST_ROOT, [threadId]);
        await tx.query(COLLECT_BLOBS, [threadId]);
      }
      return deleted;
    });
  }

  /**
   * A starting point as the database would give it back: decoded from what was stored,
   * and the values the run started with (it did not write them) through the serializer.
   */
  private async decodeStored(stored: StoredCheckpoint): Promise<CheckpointTuple> {
    const tuple = await this.decode(stored.row);
    for (const [channel, value] of Object.entries(stored.carried)) {
      const [type, bytes] = await this.serde.dumpsTyped(value);
      tuple.checkpoint.channel_values[channel] = await this.serde.loadsTyped(type, bytes);
    }
    return tuple;
  }

  private decode(row: TupleRow): Promise<CheckpointTuple> {
    return decodeTuple(this.serde, row, (current) => this.getNextVersion(current as number | undefined));
  }
}
