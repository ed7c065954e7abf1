import type { CounterState, Hit, HitResult, RateLimitStore } from "./store.ts";

interface MemoryStoreOptions {
  /** Hard cap on live counters; past it the oldest window is dropped. */
  maxKeys?: number;
  /** How often (in clock time) finished windows are swept out. */
  sweepIntervalMs?: number;
}

const DEFAULT_MEMORY_MAX_KEYS = 200_000;

/**
 * Counters in this process. Bounded two ways so a flood of new identities cannot grow
 * it without limit: finished windows are swept out every `sweepIntervalMs` (driven by
 * the clock of the calls, no timer), and at `maxKeys` the key whose window opened
 * first is dropped. Dropping a live counter gives that caller a fresh window, which
 * errs towards letting traffic through; size `maxKeys` for the identities you expect.
 */
export class MemoryStore implements RateLimitStore {
  readonly maxKeys: number;
  private readonly sweepIntervalMs: number;
  // Insertion order is window-opening order: a key is deleted and re-added when its
  // window restarts, so the first entry is always the oldest window.
  private readonly windows = new Map<string, CounterState>();
  private lastSweep = -Infinity;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxKeys = options.maxKeys ?? DEFAULT_MEMORY_MAX_KEYS;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
    if (!(this.maxKeys >= 1)) throw new RangeError("maxKeys must be at least 1");
  }

  get size(): number {
    return this.windows.size;
  }

  hit(hits: Hit[], now: number): HitResult {
    if (now - this.lastSweep >= this.sweepIntervalMs) this.sweep(now);
    const counters: CounterState[] = new Array(hits.length);
    const live: Array<CounterState | undefined> = new Array(hits.length);
    let allowed = true;
    // First pass: look only. JavaScript runs this to completion, so nothing can
    // slip in between the check and the consume below.
    for (let i = 0; i < hits.length; i++) {
      const hit = hits[i]!;
      const window = this.windows.get(hit.key);
      if (window !== undefined && window.resetAt > now) {
        live[i] = window;
        counters[i] = { count: window.count, resetAt: window.resetAt };
        if (window.count >= hit.limit) allowed = false;
      } else {
        counters[i] = { count: 0, resetAt: now + hit.windowMs };
      }
    }
    if (!allowed) return { allowed, counters };
    for (let i = 0; i < hits.length; i++) {
      const counter = counters[i]!;
      counter.count += 1;
      const window = live[i];
      if (window !== undefined) {
        window.count = counter.count;
        continue;
      }
      // A new window: re-insert the key so Map order stays window-opening order.
      const key = hits[i]!.key;
      if (!this.windows.delete(key) && this.windows.size >= this.maxKeys) this.evictOldest();
      this.windows.set(key, { count: 1, resetAt: counter.resetAt });
    }
    return { allowed, counters };
  }

  /** Drops every finished window. */
  sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      if (window.resetAt <= now) this.windows.delete(key);
    }
  }

  private evictOldest(): void {
    const oldest = this.windows.keys().next();
    if (!oldest.done) this.windows.delete(oldest.value);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}
