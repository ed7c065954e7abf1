import { adoptDefaultTtl, claimExpiredThreads, setExpiry, type ThreadTtl } from "./repository.ts";
import { expiryOf, pruneIfIdle, removeThread, type RemovalDeps } from "./service.ts";

export interface SweepResult {
  /** Threads removed (ttl strategy `delete`). */
  deleted: number;
  /** Threads cut down to their latest checkpoint (ttl strategy `keep_latest`). */
  pruned: number;
}

/** `checkpointer.ttl` of langgraph.json. */
interface SweepPolicy {
  /** The TTL of threads created without one. */
  defaultTtl?: ThreadTtl;
  /** Threads one sweep handles at most; the rest wait for the next. */
  limit?: number;
}

/** How long a claimed thread stays out of other sweepers' sight. */
const CLAIM_SECONDS = 300;

/**
 * Applies thread TTLs: every thread whose `expires_at` has passed and that has no pending
 * or running run is deleted (strategy `delete`) or pruned to its latest checkpoint
 * (`keep_latest`, after which its TTL starts again). Safe to run from several processes at
 * once: threads are claimed with SKIP LOCKED. The run attempt schedules it.
 *
 * @example
 * setInterval(() => void sweepExpiredThreads(deps, new Date()), 60_000).unref();
 */
export async function sweepExpiredThreads(deps: RemovalDeps, now: Date, batchSize = 100, policy: SweepPolicy = {}): Promise<SweepResult> {
  const result: SweepResult = { deleted: 0, pruned: 0 };
  if (policy.defaultTtl) await adoptDefaultTtl(deps.db, policy.defaultTtl);
  let left = policy.limit ?? Infinity;
  for (;;) {
    const claimed = await claimExpiredThreads(deps.db, now, Math.min(batchSize, left), CLAIM_SECONDS);
    left -= claimed.length;
    for (const { thread_id, ttl } of claimed) {
      if (ttl.strategy === "keep_latest") {
        // Checked again under the thread lock: a run queued since the claim must keep its
        // first checkpoints. A thread skipped so is tried again once the claim's lease ends.
        if (await pruneIfIdle(deps, thread_id)) {
          await setExpiry(deps.db, thread_id, expiryOf(ttl, now));
          result.pruned++;
        }
      } else if (await removeThread(deps, thread_id)) {
        result.deleted++;
      }
    }
    if (claimed.length < batchSize || left <= 0) return result;
  }
}
