import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointListOptions, CheckpointMetadata, CheckpointTuple, PendingWrite } from "@langchain/langgraph-checkpoint";
import { ForeignBlob, PYTHON_BLOB_PREFIX } from "../checkpointer/foreign-blobs.ts";

/** The saver methods a Python graph's checkpointer calls back into (SlipwaySaver, or one lent by a run's tail). */
export interface CallbackSaver {
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: Record<string, unknown>): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
}

/** A blob as the protocol carries it: `{t: type, b: base64}`. */
interface WireBlob {
  t: string;
  b: string;
}

function fromWire(blob: WireBlob): ForeignBlob {
  if (!blob.t.startsWith(PYTHON_BLOB_PREFIX)) throw new Error(`a Python checkpoint value must have a "${PYTHON_BLOB_PREFIX}" type, got "${blob.t}"`);
  return new ForeignBlob(blob.t, Buffer.from(blob.b, "base64"));
}

function toWire(value: unknown, what: string): WireBlob {
  if (value instanceof ForeignBlob) return { t: value.type, b: Buffer.from(value.bytes).toString("base64") };
  throw new Error(`${what} was written by a JS graph: a Python graph cannot read this thread's checkpoints`);
}

function tupleToWire(tuple: CheckpointTuple | undefined): unknown {
  if (!tuple) return null;
  const values = Object.entries(tuple.checkpoint.channel_values ?? {}).map(([channel, value]) => [channel, toWire(value, `channel "${channel}"`)]);
  return {
    config: tuple.config,
    checkpoint: { ...tuple.checkpoint, channel_values: Object.fromEntries(values) },
    metadata: tuple.metadata ?? {},
    parent_config: tuple.parentConfig ?? null,
    pending_writes: (tuple.pendingWrites ?? []).map(([task, channel, value]) => [task, channel, toWire(value, `a write to "${channel}"`)]),
  };
}

/** Answers the worker's `checkpoint.*` callbacks with `saver` (decision 0036, part 6). */
export async function answerCheckpointCallback(saver: CallbackSaver, op: string, args: Record<string, unknown>): Promise<unknown> {
  const config = (args.config ?? {}) as RunnableConfig;
  switch (op) {
    case "checkpoint.get_tuple":
      return tupleToWire(await saver.getTuple(config));
    case "checkpoint.list": {
      const options: CheckpointListOptions = {};
      if (typeof args.limit === "number") options.limit = args.limit;
      if (args.before) options.before = args.before as RunnableConfig;
      if (args.filter) options.filter = args.filter as Record<string, unknown>;
      const found: unknown[] = [];
      for await (const tuple of saver.list(config, options)) found.push(tupleToWire(tuple));
      return found;
    }
    case "checkpoint.put": {
      const sent = args.checkpoint as Checkpoint & { channel_values: Record<string, WireBlob> };
      const values = Object.fromEntries(Object.entries(sent.channel_values ?? {}).map(([channel, blob]) => [channel, fromWire(blob)]));
      const checkpoint = { ...sent, channel_values: values } as Checkpoint;
      return saver.put(config, checkpoint, args.metadata as CheckpointMetadata, (args.new_versions ?? {}) as Record<string, unknown>);
    }
    case "checkpoint.put_writes": {
      const writes = (args.writes as [string, WireBlob][]).map(([channel, blob]) => [channel, fromWire(blob)] as PendingWrite);
      await saver.putWrites(config, writes, String(args.task_id), String(args.task_path ?? ""));
      return null;
    }
    default:
      throw new Error(`unknown callback "${op}"`);
  }
}
