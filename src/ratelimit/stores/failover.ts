import { MemoryStore } from "./memory.ts";
import { StoreUnavailableError, type Hit, type HitResult, type RateLimitStore } from "./store.ts";

/**
 * What happens to a request when the shared store (Redis) cannot answer:
 * - "open":   let it through unchecked (availability over limits);
 * - "closed": refuse it with 503 (limits over availability);
 * - "memory": count it in this process instead, so limits hold per node until
 *             Redis is back (a cluster of n nodes then admits up to n times a limit).
 */
export type FailureMode = "open" | "closed" | "memory";
export const FAILURE_MODES: readonly FailureMode[] = ["open", "closed", "memory"];

interface FailoverOptions {
  mode: FailureMode;
  /** Used in mode "memory"; one is made when not given. */
  fallback?: MemoryStore;
  /** Told about failures, at most once per `warnEveryMs` of clock time. */
  warn?: (error: unknown, mode: FailureMode) => void;
  warnEveryMs?: number;
}

export class FailoverStore implements RateLimitStore {
  private readonly fallback: MemoryStore | undefined;
  private lastWarning = -Infinity;

  constructor(
    readonly primary: RateLimitStore,
    private readonly options: FailoverOptions,
  ) {
    this.fallback = options.mode === "memory" ? (options.fallback ?? new MemoryStore()) : undefined;
  }

  async hit(hits: Hit[], now: number): Promise<HitResult> {
    try {
      return await this.primary.hit(hits, now);
    } catch (error) {
      if (now - this.lastWarning >= (this.options.warnEveryMs ?? 10_000)) {
        this.lastWarning = now;
        this.options.warn?.(error, this.options.mode);
      }
      switch (this.options.mode) {
        case "open":
          return { allowed: true, counters: [] };
        case "closed":
          throw new StoreUnavailableError("rate-limit store unavailable", { cause: error });
        case "memory":
          return this.fallback!.hit(hits, now);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.fallback?.close()]);
  }
}
