import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { loadCheckpointPackage } from "./checkpoint-package.ts";
import { EXCLUDED_METADATA_KEYS, WRITES_IDX_MAP } from "./format.ts";
import { withoutNul } from "../../storage/jsonb-text.ts";

/**
 * Turning checkpoints, metadata and writes into column values and back. Values go
 * through the saver's serializer (`dumpsTyped`/`loadsTyped`) into bytea; the
 * checkpoint skeleton and the metadata are JSON so SQL can read them.
 */

const decoder = new TextDecoder();

/** A row of GET_TUPLE or LIST_TUPLES (sql.ts). */
export interface TupleRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: Omit<Checkpoint, "channel_values">;
  /** The json column as text, so the serializer parses it once, reviving what it encoded. */
  metadata: string;
  blob_channels: string[] | null;
  blob_types: string[] | null;
  blob_values: Uint8Array[] | null;
  write_task_ids: string[] | null;
  write_channels: string[] | null;
  write_types: string[] | null;
  write_values: Uint8Array[] | null;
  send_types: string[] | null;
  send_values: Uint8Array[] | null;
}

/** Parallel arrays for the unnest() of PUT_BATCH (a checkpoint's blobs). */
export interface BlobColumns {
  channels: string[];
  versions: string[];
  types: string[];
  values: Uint8Array[];
}

/** Parallel arrays for the unnest() of PUT_BATCH (a task's writes). */
export interface WriteColumns {
  idx: number[];
  channels: string[];
  types: string[];
  values: Uint8Array[];
}

/** The checkpoint without its channel values, as stored in `checkpoints.checkpoint`. */
export function checkpointJson(checkpoint: Checkpoint): string {
  const { channel_values: _values, ...skeleton } = checkpoint;
  return JSON.stringify(skeleton);
}

/** Serializes the values of the channels that changed (`newVersions`). */
export async function dumpBlobs(serde: SerializerProtocol, values: Record<string, unknown>, newVersions: ChannelVersions): Promise<BlobColumns> {
  const columns: BlobColumns = { channels: [], versions: [], types: [], values: [] };
  for (const [channel, version] of Object.entries(newVersions)) {
    // A channel with a new version and no value was emptied: no blob means absent.
    if (!Object.hasOwn(values, channel) || values[channel] === undefined) continue;
    const [type, bytes] = await serde.dumpsTyped(values[channel]);
    columns.channels.push(channel);
    columns.versions.push(String(version));
    columns.types.push(type);
    columns.values.push(bytes);
  }
  return columns;
}

/**
 * Serializes one task's writes. Special channels take their fixed negative index
 * (WRITES_IDX_MAP); when one repeats in a batch the last one wins, as it would
 * have had the writes been stored one by one.
 */
export async function dumpWrites(serde: SerializerProtocol, writes: PendingWrite[]): Promise<WriteColumns> {
  const byIdx = new Map<number, [string, string, Uint8Array]>();
  for (const [position, [channel, value]] of writes.entries()) {
    const idx = WRITES_IDX_MAP[channel] ?? position;
    const [type, bytes] = await serde.dumpsTyped(value);
    byIdx.set(idx, [channel, type, bytes]);
  }
  const columns: WriteColumns = { idx: [], channels: [], types: [], values: [] };
  for (const [idx, [channel, type, bytes]] of byIdx) {
    columns.idx.push(idx);
    columns.channels.push(channel);
    columns.types.push(type);
    columns.values.push(bytes);
  }
  return columns;
}

/**
 * Metadata as JSON text for its json column: the serializer's JSON (so LangChain
 * objects in it survive, and keys keep their order), minus NUL escapes, which the
 * jsonb casts of filters refuse.
 */
export async function metadataJson(serde: SerializerProtocol, metadata: CheckpointMetadata): Promise<string> {
  const [type, bytes] = await serde.dumpsTyped(metadata);
  const text = type === "json" ? decoder.decode(bytes) : JSON.stringify(metadata);
  return withoutNul(text);
}

/**
 * The metadata a checkpoint is stored with: the caller's `config.metadata` (the
 * agent server puts run_id, thread_id, assistant_id, graph_id there) under the
 * metadata LangGraph gives, without LangGraph's per-task bookkeeping keys.
 * LangGraph Platform stores the same, and rollback finds a run's checkpoints by it.
 */
export function withConfigMetadata(config: RunnableConfig, metadata: CheckpointMetadata): CheckpointMetadata {
  const inherited = config.metadata;
  if (!inherited || Object.keys(inherited).length === 0) return metadata;
  const merged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inherited)) {
    if (value === undefined || (EXCLUDED_METADATA_KEYS.has(key) && key !== "thread_id")) continue;
    merged[key] = value;
  }
  return { ...merged, ...metadata } as CheckpointMetadata;
}

/** The run a write belongs to, when the caller said (config.metadata.run_id). */
export function runIdOf(config: RunnableConfig): string | null {
  const runId = config.metadata?.run_id;
  return typeof runId === "string" && runId !== "" ? runId : null;
}

/** Rebuilds a CheckpointTuple from a GET_TUPLE or LIST_TUPLES row. */
export async function decodeTuple(
  serde: SerializerProtocol,
  row: TupleRow,
  nextVersion: (current: number | string | undefined) => number | string,
): Promise<CheckpointTuple> {
  const channelValues: Record<string, unknown> = {};
  const blobChannels = row.blob_channels ?? [];
  for (let i = 0; i < blobChannels.length; i += 1) {
    channelValues[blobChannels[i]] = await serde.loadsTyped(row.blob_types![i], row.blob_values![i]);
  }
  const checkpoint = { ...row.checkpoint, channel_values: channelValues } as Checkpoint;
  if (row.send_types && row.send_types.length > 0) {
    await migratePendingSends(serde, checkpoint, row.send_types, row.send_values!, nextVersion);
  }
  const pendingWrites: CheckpointPendingWrite[] = [];
  const writeTasks = row.write_task_ids ?? [];
  for (let i = 0; i < writeTasks.length; i += 1) {
    const value = await serde.loadsTyped(row.write_types![i], row.write_values![i]);
    pendingWrites.push([writeTasks[i], row.write_channels![i], value]);
  }
  const tuple: CheckpointTuple = {
    config: configOf(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
    checkpoint,
    metadata: (await serde.loadsTyped("json", row.metadata)) as CheckpointMetadata,
    pendingWrites,
  };
  if (row.parent_checkpoint_id) {
    tuple.parentConfig = configOf(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id);
  }
  return tuple;
}

export function configOf(thread_id: string, checkpoint_ns: string, checkpoint_id: string): RunnableConfig {
  return { configurable: { thread_id, checkpoint_ns, checkpoint_id } };
}

/**
 * Checkpoints older than format v4 kept pending Sends as writes of their parent;
 * v4 keeps them in the TASKS channel. Done on read, as the upstream savers do.
 */
async function migratePendingSends(
  serde: SerializerProtocol,
  checkpoint: Checkpoint,
  types: string[],
  values: Uint8Array[],
  nextVersion: (current: number | string | undefined) => number | string,
): Promise<void> {
  const sends = await Promise.all(types.map((type, i) => serde.loadsTyped(type, values[i])));
  const { TASKS, maxChannelVersion } = await loadCheckpointPackage();
  checkpoint.channel_values[TASKS] = sends;
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : nextVersion(undefined);
}
