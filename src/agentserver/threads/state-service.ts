import { conflict, invalidField, notFound, SlipwayError } from "../../http/errors.ts";
import type { Database } from "../../storage/database.ts";
import { graphForThread } from "../assistants/thread-graph.ts";
import type { GraphLike, GraphRegistry } from "../graphs/registry.ts";
import { ownCopy } from "../graphs/graph-copy.ts";
import { SlipwaySaver } from "../checkpointer/saver.ts";
import { checkpointStorage, getThread, hasActiveRun, lockThread, writeSnapshot, type ThreadRow } from "./repository.ts";
import type { CheckpointConfig, StatePatch, StateUpdate, ThreadStateWire, ThreadStorage, WireCheckpointConfig } from "./schemas.ts";
import type { ThreadCheckpointer } from "./service.ts";
import { computeThreadSnapshot, refreshThreadSnapshot } from "./snapshot.ts";
import {
  configFor,
  emptyState,
  hasCheckpoint,
  readHistory,
  readSnapshot,
  toThreadState,
  updateGraphState,
  wireCheckpoint,
  type CheckpointTarget,
} from "./state.ts";

/**
 * Whether the target's checkpoint is stored. A subgraph compiled with `checkpointer: true`
 * keeps its checkpoints under the namespace without task ids (LangGraph's
 * _ownCheckpointConfig), so that form counts too.
 */
async function hasCheckpointAt(reader: Pick<ThreadCheckpointer, "getTuple">, target: CheckpointTarget): Promise<boolean> {
  if (await reader.getTuple(configFor(target))) return true;
  const ns = target.checkpoint_ns ?? "";
  const own = ns
    .split("|")
    .map((part) => part.split(":")[0])
    .join("|");
  return own !== ns && (await reader.getTuple(configFor({ ...target, checkpoint_ns: own }))) !== undefined;
}

const busy = (threadId: string) => conflict(`Thread ${threadId} is busy with a run; update its state when the run has ended`);

export interface ThreadStateDeps {
  db: Database;
  graphs: GraphRegistry;
  checkpointer: ThreadCheckpointer;
  now?: () => Date;
  /** Per-thread byte counts (GET /threads/{id}/storage); default: only when `checkpointer` is our own. */
  storageAvailable?: boolean;
}

/**
 * The rules of thread state: read (latest, at a checkpoint, history), update through the
 * thread's graph, patch checkpoint metadata. Never sees HTTP.
 */
export class ThreadStateService {
  constructor(private readonly deps: ThreadStateDeps) {}

  private async thread(threadId: string): Promise<ThreadRow> {
    const thread = await getThread(this.deps.db, threadId);
    if (!thread) throw notFound(`Thread ${threadId} not found`);
    return thread;
  }

  /** The thread's graph; undefined while it has none (no run yet and no graph_id given). */
  private async graph(thread: ThreadRow): Promise<GraphLike | undefined> {
    const graphId = thread.metadata?.graph_id;
    if (graphId === undefined || graphId === null) return undefined;
    if (typeof graphId !== "string" || !this.deps.graphs.has(graphId)) {
      throw notFound(`Graph "${String(graphId)}" of thread ${thread.thread_id} not found on this server`);
    }
    return graphForThread(this.deps, graphId, thread);
  }

  async get(threadId: string, checkpoint: CheckpointConfig | null = null, subgraphs = false): Promise<ThreadStateWire> {
    const thread = await this.thread(threadId);
    const target = this.target(threadId, checkpoint);
    const graph = await this.graph(thread);
    const snapshot = graph ? await readSnapshot(graph, target, subgraphs) : undefined;
    if (!snapshot || !hasCheckpoint(snapshot)) {
      if (target.checkpoint_id) throw notFound(`Checkpoint ${target.checkpoint_id} not found on thread ${threadId}`);
      return emptyState(threadId);
    }
    return toThreadState(snapshot);
  }

  async history(
    threadId: string,
    options: {
      limit: number;
      before?: string | CheckpointConfig | { configurable: CheckpointConfig } | null;
      metadata?: Record<string, unknown> | null;
      checkpoint?: CheckpointConfig | null;
    },
  ): Promise<ThreadStateWire[]> {
    const thread = await this.thread(threadId);
    const target = this.target(threadId, options.checkpoint);
    const graph = await this.graph(thread);
    if (!graph) return [];
    const before =
      !options.before || typeof options.before === "string"
        ? options.before
        : "configurable" in options.before
          ? options.before.configurable.checkpoint_id
          : options.before.checkpoint_id;
    return readHistory(graph, target, { limit: options.limit, before, filter: options.metadata });
  }

  /**
   * Writes `values` as if `as_node` had run (graph.updateState), on the latest checkpoint
   * or the given one (a fork). Refused while a run is pending or running: the run would
   * race the update for the same checkpoint. The check, the checkpoint and the thread's
   * snapshot share one transaction under the thread lock (decision 0025).
   */
  async update(threadId: string, body: StateUpdate): Promise<{ checkpoint: WireCheckpointConfig }> {
    const thread = await this.thread(threadId);
    const graph = await this.graph(thread);
    if (!graph) {
      throw conflict(`Thread ${threadId} has no graph yet: create it with metadata.graph_id, or run it once, before updating its state`);
    }
    if (body.checkpoint_id && body.checkpoint?.checkpoint_id && body.checkpoint_id !== body.checkpoint.checkpoint_id) {
      throw invalidField(["body", "checkpoint_id"], "disagrees with checkpoint.checkpoint_id");
    }
    const target = this.target(threadId, body.checkpoint, body.checkpoint_id);
    const update = (on: GraphLike) => updateGraphState(on, target, body.values ?? null, body.as_node ?? undefined);
    // A fork from a checkpoint the thread does not have would start a line whose parent is
    // missing, in a subgraph's namespace as at the root: the field is refused (the vendor
    // documents 422 here, not 404).
    const mustExist = async (reader: Pick<ThreadCheckpointer, "getTuple">) => {
      if (target.checkpoint_id && !(await hasCheckpointAt(reader, target))) {
        const field = body.checkpoint_id ? ["body", "checkpoint_id"] : ["body", "checkpoint", "checkpoint_id"];
        throw invalidField(field, `names no checkpoint of thread ${threadId}${target.checkpoint_ns ? ` in namespace ${target.checkpoint_ns}` : ""}`);
      }
    };
    const checkpointer = this.deps.checkpointer;
    if (!(checkpointer instanceof SlipwaySaver)) {
      // Another checkpointer cannot join our transaction: checked, then written.
      if (await hasActiveRun(this.deps.db, threadId)) throw busy(threadId);
      await mustExist(checkpointer);
      const next = await update(graph);
      await refreshThreadSnapshot(this.deps, threadId);
      return { checkpoint: wireCheckpoint(next.configurable, threadId) };
    }
    // Checked and written under the thread lock run creation takes, in one transaction: a
    // run queued meanwhile waits for the update and starts from its checkpoint.
    return this.deps.db.transaction(async (tx) => {
      if (!(await lockThread(tx, threadId))) throw notFound(`Thread ${threadId} not found`);
      if (await hasActiveRun(tx, threadId)) throw busy(threadId);
      const saver = checkpointer.within(tx);
      await mustExist(saver);
      const own = ownCopy(graph);
      own.checkpointer = saver;
      const next = await update(own);
      const snapshot = await computeThreadSnapshot(this.deps, threadId, {}, { graph: own, checkpointer: saver });
      if (snapshot) await writeSnapshot(tx, threadId, snapshot);
      return { checkpoint: wireCheckpoint(next.configurable, threadId) };
    });
  }

  /**
   * PATCH /threads/{id}/state (the SDKs' patchState): merges `metadata` into the metadata
   * of the latest checkpoint (or the given one). The checkpoint is stored again as it
   * was, under its own id and parent, with the merged metadata: no new checkpoint.
   */
  async patchMetadata(threadId: string, body: StatePatch): Promise<void> {
    await this.thread(threadId);
    const target = this.target(threadId, body.checkpoint, body.checkpoint_id);
    const tuple = await this.deps.checkpointer.getTuple(configFor(target));
    if (!tuple) {
      throw notFound(target.checkpoint_id ? `Checkpoint ${target.checkpoint_id} not found on thread ${threadId}` : `Thread ${threadId} has no checkpoint yet`);
    }
    const ns = tuple.config.configurable?.checkpoint_ns ?? "";
    const parent = tuple.parentConfig ?? { configurable: { thread_id: threadId, checkpoint_ns: ns } };
    await this.deps.checkpointer.put(parent, tuple.checkpoint, { ...tuple.metadata, ...body.metadata } as typeof tuple.metadata & object, {});
  }

  async storage(threadId: string): Promise<ThreadStorage> {
    await this.thread(threadId);
    if (!(this.deps.storageAvailable ?? this.deps.checkpointer instanceof SlipwaySaver)) {
      throw new SlipwayError("not_implemented", "Thread storage figures need Slipway's built-in checkpointer");
    }
    const usage = await checkpointStorage(this.deps.db, threadId);
    const channelBytes = usage.channels.reduce((sum, c) => sum + c.bytes, 0);
    return {
      thread_id: threadId,
      total_bytes: usage.checkpoints.bytes + channelBytes + usage.writes.bytes,
      checkpoints: usage.checkpoints,
      channel_values: {
        count: usage.channels.reduce((sum, c) => sum + c.versions, 0),
        bytes: channelBytes,
        by_channel: Object.fromEntries(usage.channels.map((c) => [c.channel, { versions: c.versions, bytes: c.bytes }])),
      },
      pending_writes: usage.writes,
    };
  }

  private target(threadId: string, checkpoint?: CheckpointConfig | null, checkpointId?: string | null): CheckpointTarget {
    if (checkpoint?.thread_id && checkpoint.thread_id !== threadId) {
      throw invalidField(["body", "checkpoint", "thread_id"], `names another thread than ${threadId}`);
    }
    return {
      thread_id: threadId,
      checkpoint_ns: checkpoint?.checkpoint_ns ?? "",
      checkpoint_id: checkpointId ?? checkpoint?.checkpoint_id ?? null,
      checkpoint_map: checkpoint?.checkpoint_map ?? null,
    };
  }
}
