/**
 * Where counters live. Every store keeps one fixed window per key: the window opens
 * at the key's first counted request and lasts `windowMs`; within it at most `limit`
 * requests are counted; at `resetAt` the count starts again from zero.
 */

/** Milliseconds since the epoch; injected so tests move time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/** One counter a request must fit into. */
export interface Hit {
  key: string;
  limit: number;
  windowMs: number;
}

export interface CounterState {
  /** Requests counted in the current window, this one included when it was allowed. */
  count: number;
  /** When the current window ends (ms since the epoch). */
  resetAt: number;
}

export interface HitResult {
  /** True when every counter had room; then each was incremented. Otherwise none was. */
  allowed: boolean;
  /** One per hit, same order. Empty when a failed store let the request through unchecked. */
  counters: CounterState[];
}

export interface RateLimitStore {
  /**
   * Check-then-consume, atomically over all the hits of one request: a request
   * rejected by one counter must not use up quota on the others.
   * Memory answers synchronously; Redis with a promise.
   */
  hit(hits: Hit[], now: number): HitResult | Promise<HitResult>;
  close(): Promise<void>;
}

/** A store that refuses to decide (Redis down with failure mode "closed"). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
