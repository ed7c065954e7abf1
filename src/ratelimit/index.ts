// The rate limiter's public surface. CLI commands need three calls:
//   addRateLimitFlags(command)                                   declare the flags
//   const options = await rateLimitOptionsFromFlags(rateLimitFlagsFrom(command.opts()), { resolveIdentity, log })
//   registerRateLimit(app, options)                              before the auth hooks
export { addRateLimitFlags, parseRateLimitArgs, rateLimitFlagsFrom, type RateLimitFlags } from "./cli-options.ts";
export { clientIp, ipIdentity, parseTrustedProxies } from "./client-ip.ts";
export { PolicyError, checkPolicy, compilePolicy } from "./compile.ts";
export { DEFAULT_RULES } from "./default-policy.ts";
export { RateLimiter, applicableRules, type Decision, type RequestFacts } from "./evaluate.ts";
export { EXPOSED_HEADERS } from "./headers.ts";
export { registerRateLimit, type CallerIdentity, type RateLimitOptions } from "./plugin.ts";
export { loadPolicyFile, policyFromText } from "./policy-file.ts";
export type { CompiledPolicy, CompiledRule, IdentityKind, Region, RuleSource, Tier } from "./rules.ts";
export { rateLimitOptionsFromFlags, type RateLimitDeps } from "./setup.ts";
export { FailoverStore, FAILURE_MODES, type FailureMode } from "./stores/failover.ts";
export { MemoryStore } from "./stores/memory.ts";
export { RedisStore } from "./stores/redis.ts";
export { StoreUnavailableError, systemClock, type Clock, type RateLimitStore } from "./stores/store.ts";
