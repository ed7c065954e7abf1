import type { FastifyRequest } from "fastify";
import type { RateLimitFlags } from "./cli-options.ts";
import { parseTrustedProxies } from "./client-ip.ts";
import { compilePolicy } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import type { CallerIdentity, RateLimitOptions } from "./plugin.ts";
import { loadPolicyFile } from "./policy-file.ts";
import { FailoverStore } from "./stores/failover.ts";
import { MemoryStore } from "./stores/memory.ts";
import { systemClock, type Clock, type RateLimitStore } from "./stores/store.ts";

const REDIS_STARTUP_WAIT_MS = 2_000;

export interface RateLimitDeps {
  resolveIdentity: (request: FastifyRequest) => CallerIdentity | Promise<CallerIdentity>;
  /** Where store failures are reported (a pino/Fastify logger fits). */
  log?: { warn: (object: object, message: string) => void };
  clock?: Clock;
}

/**
 * Turns parsed flags into the options of registerRateLimit: loads and checks the
 * policy file (a PolicyError here should stop start-up; its message names the bad
 * rule), validates trusted proxies, and opens the store (Redis wrapped in the chosen
 * failure mode, else memory). It waits up to 2 s for Redis; after that Redis keeps
 * connecting in the background and requests get the failure mode until it answers.
 */
export async function rateLimitOptionsFromFlags(flags: RateLimitFlags, deps: RateLimitDeps): Promise<RateLimitOptions> {
  const clock = deps.clock ?? systemClock;
  const policy = flags.policyFile ? await loadPolicyFile(flags.policyFile) : DEFAULT_RULES;
  compilePolicy(policy, flags.region);
  parseTrustedProxies(flags.trustedProxies);
  const store = flags.enabled ? await createStore(flags, deps) : new MemoryStore();
  return {
    enabled: flags.enabled,
    region: flags.region,
    policy,
    store,
    trustedProxies: flags.trustedProxies,
    resolveIdentity: deps.resolveIdentity,
    clock,
  };
}

async function createStore(flags: RateLimitFlags, deps: RateLimitDeps): Promise<RateLimitStore> {
  if (!flags.redisUrl) return new MemoryStore();
  // Loaded only when Redis is asked for: the client library alone is a fifth of a second of every start.
  const { RedisStore } = await import("./stores/redis.ts");
  const redis = new RedisStore({ url: flags.redisUrl });
  // Give Redis a moment so the first requests use it, but never refuse to start:
  // until it answers, the failure mode applies.
  await redis.ready(REDIS_STARTUP_WAIT_MS).catch((error: unknown) => {
    deps.log?.warn({ err: error, failureMode: flags.redisFailure }, "rate-limit Redis not reachable at start-up; the failure mode applies until it is");
  });
  return new FailoverStore(redis, {
    mode: flags.redisFailure,
    warn: (error, mode) => deps.log?.warn({ err: error, failureMode: mode }, "rate-limit store (Redis) unreachable"),
  });
}
