import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { HIT_SCRIPT } from "./redis-script.ts";
import type { CounterState, Hit, HitResult, RateLimitStore } from "./store.ts";

interface RedisStoreOptions {
  url: string;
  /** Prefix of every key, so several installations can share one Redis. */
  prefix?: string;
  /** A command that takes longer than this counts as Redis being unreachable. */
  commandTimeoutMs?: number;
  /** Called with connection errors (already rate-limited by the caller if it wants). */
  onError?: (error: Error) => void;
}

interface ScriptedRedis extends Redis {
  slipwayRateLimitHit(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
}

/**
 * Counters in Redis, shared by every node that points at it: one atomic script call
 * per request (see redis-script.ts). Failures are thrown; failover.ts decides what a
 * failure means. Keys are hashed so API keys and user ids never appear in Redis.
 */
export class RedisStore implements RateLimitStore {
  readonly redis: ScriptedRedis;
  readonly prefix: string;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? "slipway:rl:";
    this.redis = new Redis(options.url, {
      // Fail fast instead of queueing: while Redis is away a request should get the
      // configured failure behaviour now, not wait for a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 500,
      connectTimeout: 2_000,
      // Keep trying to reconnect in the background, at most every 2 s.
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    }) as ScriptedRedis;
    this.redis.defineCommand("slipwayRateLimitHit", { lua: HIT_SCRIPT });
    // Without a listener ioredis prints every connection error itself.
    this.redis.on("error", (error: Error) => options.onError?.(error));
  }

  /** Resolves once connected; rejects if not connected within `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (this.redis.status === "ready") return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off("ready", onReady);
        reject(new Error(`redis not ready after ${timeoutMs} ms (status ${this.redis.status})`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once("ready", onReady);
    });
  }

  /** The Redis key that holds a counter. */
  redisKey(key: string): string {
    return this.prefix + createHash("sha256").update(key).digest("base64url").slice(0, 32);
  }

  async hit(hits: Hit[], now: number): Promise<HitResult> {
    const args: (string | number)[] = new Array(hits.length * 3 + 1);
    for (let i = 0; i < hits.length; i++) args[i] = this.redisKey(hits[i]!.key);
    args[hits.length] = now;
    for (let i = 0; i < hits.length; i++) {
      args[hits.length + 1 + 2 * i] = hits[i]!.limit;
      args[hits.length + 2 + 2 * i] = hits[i]!.windowMs;
    }
    const reply = await this.redis.slipwayRateLimitHit(hits.length, ...args);
    const counters: CounterState[] = new Array(hits.length);
    for (let i = 0; i < hits.length; i++) counters[i] = { count: Number(reply[1 + 2 * i]), resetAt: Number(reply[2 + 2 * i]) };
    return { allowed: reply[0] === 1, counters };
  }

  async close(): Promise<void> {
    if (this.redis.status === "end") return;
    // quit() waits for Redis; when it is unreachable, just drop the connection.
    if (this.redis.status === "ready") await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
