import { randomUUID } from "node:crypto";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { conflict, invalidField, notFound } from "../../http/errors.ts";
import type { Database } from "../../storage/database.ts";
import { SlipwaySaver } from "../checkpointer/saver.ts";
import type { GraphRegistry } from "../graphs/registry.ts";
import { parseExtract } from "./extract.ts";
import * as sql from "./repository.ts";
import type { ThreadRow, ThreadTtl } from "./repository.ts";
import type { Thread, ThreadCount, ThreadCreate, ThreadPatch, ThreadSearch, TtlInput } from "./schemas.ts";
import { graphOfThread, refreshThreadSnapshot } from "./snapshot.ts";
import { applySupersteps } from "./state.ts";
import { toThread } from "./wire.ts";

/** What the threads group needs of the checkpointer: LangGraph's saver plus SlipwaySaver's extras. */
export type ThreadCheckpointer = Pick<BaseCheckpointSaver, "getTuple" | "put" | "deleteThread"> & {
  copyThread(fromThreadId: string, toThreadId: string): Promise<void>;
  pruneThreadKeepLatest(threadId: string): Promise<number>;
};

export interface ThreadServiceDeps {
  db: Database;
  graphs: GraphRegistry;
  checkpointer: ThreadCheckpointer;
  now?: () => Date;
  newId?: () => string;
  /** Called before a thread is deleted: the run service cancels the thread's active runs here. */
  beforeDelete?: (threadId: string) => Promise<void>;
}

/** The parts of ThreadServiceDeps that removing a thread needs (also used by the TTL sweep). */
export type RemovalDeps = Pick<ThreadServiceDeps, "db" | "checkpointer" | "beforeDelete">;

/**
 * Removes a thread for good: active runs are stopped by the hook, the row goes with its
 * runs (FK cascade), then its checkpoints. Checkpoints go last: if that step fails, what
 * is left is unreachable history, never a thread whose state has vanished.
 */
export async function removeThread(deps: RemovalDeps, threadId: string): Promise<boolean> {
  await deps.beforeDelete?.(threadId);
  const existed = await sql.deleteThreadRow(deps.db, threadId);
  await deps.checkpointer.deleteThread(threadId);
  return existed;
}

/**
 * keep_latest for one thread, unless a run of it is pending or running (POST /threads/prune
 * and the TTL sweep). With our checkpointer the check and the prune share one transaction
 * under the thread lock that queueing a run takes, so a run created meanwhile cannot lose
 * its first checkpoints (decision 0025). False when skipped or the thread is gone.
 */
export async function pruneIfIdle(deps: Pick<RemovalDeps, "db" | "checkpointer">, threadId: string): Promise<boolean> {
  const checkpointer = deps.checkpointer;
  if (!(checkpointer instanceof SlipwaySaver)) {
    if (await sql.hasActiveRun(deps.db, threadId)) return false;
    await checkpointer.pruneThreadKeepLatest(threadId);
    return true;
  }
  return deps.db.transaction(async (tx) => {
    if (!(await sql.lockThread(tx, threadId)) || (await sql.hasActiveRun(tx, threadId))) return false;
    await checkpointer.within(tx).pruneThreadKeepLatest(threadId);
    return true;
  });
}

function normalizeTtl(ttl: TtlInput): ThreadTtl {
  return { strategy: ttl.strategy ?? "delete", ttl_minutes: ttl.ttl };
}

export const expiryOf = (ttl: ThreadTtl, now: Date) => new Date(now.getTime() + ttl.ttl_minutes * 60_000);

/**
 * The rules of threads: creation (if_exists, ttl, supersteps), search, copy, prune,
 * deletion. Never sees HTTP.
 *
 * @example
 * const threads = new ThreadService({ db, graphs, checkpointer });
 * const thread = await threads.create({ metadata: { graph_id: "agent" } });
 */
export class ThreadService {
  private readonly now: () => Date;
  private readonly newId: () => string;

  constructor(private readonly deps: ThreadServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.newId = deps.newId ?? randomUUID;
  }

  async create(input: ThreadCreate): Promise<ThreadRow> {
    const threadId = input.thread_id ?? this.newId();
    const metadata = input.metadata ?? {};
    const ttl = input.ttl ? normalizeTtl(input.ttl) : null;
    const supersteps = input.supersteps ?? [];
    const graph = supersteps.length ? await graphOfThread(this.deps, { metadata, config: {}, thread_id: threadId }) : undefined;
    if (supersteps.length && !graph) {
      throw invalidField(["body", "supersteps"], `need metadata.graph_id naming a graph of this server (one of: ${this.deps.graphs.ids().join(", ")})`);
    }
    const row = await sql.insertThread(this.deps.db, { thread_id: threadId, metadata, ttl, expires_at: ttl ? expiryOf(ttl, this.now()) : null });
    if (!row) {
      if (input.if_exists === "do_nothing") return this.get(threadId);
      throw conflict(`Thread ${threadId} already exists`);
    }
    if (!graph) return row;
    try {
      await applySupersteps(graph, threadId, supersteps);
      await refreshThreadSnapshot({ ...this.deps, now: this.now }, threadId);
    } catch (error) {
      // All or nothing: a thread whose supersteps failed is not left half-built.
      await removeThread({ ...this.deps, beforeDelete: undefined }, threadId);
      throw error;
    }
    return this.get(threadId);
  }

  /** The thread, created with `metadata` when missing (runs with `if_not_exists: "create"`). */
  async ensure(threadId: string, metadata: Record<string, unknown> = {}): Promise<ThreadRow> {
    return (await sql.insertThread(this.deps.db, { thread_id: threadId, metadata, ttl: null, expires_at: null })) ?? this.get(threadId);
  }

  async get(threadId: string): Promise<ThreadRow> {
    const row = await sql.getThread(this.deps.db, threadId);
    if (!row) throw notFound(`Thread ${threadId} not found`);
    return row;
  }

  async patch(threadId: string, patch: ThreadPatch): Promise<ThreadRow> {
    const ttl = patch.ttl ? normalizeTtl(patch.ttl) : undefined;
    const row = await sql.patchThread(this.deps.db, threadId, {
      metadata: patch.metadata ?? undefined,
      ttl: ttl ? { ttl, expires_at: expiryOf(ttl, this.now()) } : undefined,
    });
    if (!row) throw notFound(`Thread ${threadId} not found`);
    return row;
  }

  async delete(threadId: string): Promise<void> {
    await this.get(threadId);
    await removeThread(this.deps, threadId);
  }

  /**
   * Deletes every thread an assistant ran (`metadata.assistant_id`, set when a run is created),
   * with runs and checkpoints: AssistantService's `deleteThreadsOf` for `delete_threads=true`.
   */
  async deleteOfAssistant(assistantId: string): Promise<number> {
    let deleted = 0;
    for (const threadId of await sql.threadIdsWithMetadata(this.deps.db, { assistant_id: assistantId })) {
      if (await removeThread(this.deps, threadId)) deleted++;
    }
    return deleted;
  }

  /** A page of threads, and the offset of the next page when more follow. */
  async search(request: ThreadSearch): Promise<{ threads: Thread[]; next?: number }> {
    const extract = request.extract ? parseExtract(request.extract) : [];
    const limit = request.limit ?? 10;
    const offset = request.offset ?? 0;
    // One row more than asked for tells whether another page follows, without a count.
    const rows = await sql.searchThreads(
      this.deps.db,
      { ids: request.ids, metadata: request.metadata, values: request.values, status: request.status },
      { limit: limit + 1, offset, sortBy: request.sort_by ?? "created_at", sortOrder: request.sort_order ?? "desc" },
    );
    const more = rows.length > limit;
    const threads = rows.slice(0, limit).map((row) => toThread(row, { select: request.select, extract }));
    return { threads, next: more ? offset + limit : undefined };
  }

  count(request: ThreadCount): Promise<number> {
    return sql.countThreads(this.deps.db, { metadata: request.metadata, values: request.values, status: request.status });
  }

  /** A new thread with the source's metadata, config, snapshot and a copy of every checkpoint. */
  async copy(threadId: string): Promise<ThreadRow> {
    await this.get(threadId);
    const copyId = this.newId();
    const row = await sql.copyThreadRow(this.deps.db, threadId, copyId, this.now());
    if (!row) throw notFound(`Thread ${threadId} not found`);
    try {
      await this.deps.checkpointer.copyThread(threadId, copyId);
    } catch (error) {
      await removeThread({ ...this.deps, beforeDelete: undefined }, copyId);
      throw error;
    }
    return row;
  }

  /**
   * POST /threads/prune. `delete` removes the threads; `keep_latest` keeps each thread and
   * its latest checkpoint and drops the older history. Ids that name no thread are
   * skipped, and so are busy threads under keep_latest (pruning under a writing run
   * could lose its writes). Returns how many threads were pruned.
   */
  async prune(threadIds: string[], strategy: "delete" | "keep_latest"): Promise<number> {
    const existing = await sql.existingThreadIds(this.deps.db, [...new Set(threadIds)]);
    let pruned = 0;
    for (const threadId of existing) {
      if (strategy === "delete") {
        if (await removeThread(this.deps, threadId)) pruned++;
      } else if (await pruneIfIdle(this.deps, threadId)) {
        pruned++;
      }
    }
    return pruned;
  }
}
