/**
 * When a request is worth sending again, and after how long. Exponential backoff with
 * jitter keeps many clients that failed together from coming back together; a server's
 * Retry-After wins over the backoff when it gives one.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (default 3: four attempts in all). */
  retries: number;
  /** The first backoff (default 500 ms); doubles each retry. */
  baseDelayMs: number;
  /** No backoff is longer (default 8 s). */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned (default 60 s). */
  maxRetryAfterMs: number;
  /** Injected for tests: a number in [0, 1). */
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY: RetryPolicy = {
  retries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    }),
};

/** Statuses that may pass: rate limited, or the server failing (501 Not Implemented never passes). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501);
}

/** Retry-After as seconds (`"7"`) or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The wait before retry number `retry` (0 for the first retry): the server's Retry-After
 * when given (undefined when it is longer than the policy waits), else "equal jitter":
 * half the exponential step, plus a random part of the other half.
 */
export function retryDelayMs(retry: number, policy: RetryPolicy, retryAfterSeconds?: number): number | undefined {
  if (retryAfterSeconds !== undefined) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxRetryAfterMs ? undefined : ms;
  }
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(step / 2 + policy.random() * (step / 2));
}
