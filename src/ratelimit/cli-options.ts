import { Command, Option } from "commander";
import { FAILURE_MODES, type FailureMode } from "./stores/failover.ts";
import { REGIONS, type Region } from "./rules.ts";

/** The rate-limit settings a command takes from its flags. */
export interface RateLimitFlags {
  /** False with --no-rate-limit. */
  enabled: boolean;
  /** --region us|eu: which column of the table applies. */
  region: Region;
  /** --rate-limit-policy <file>: YAML or JSON that extends or replaces the table. */
  policyFile?: string;
  /** --redis-url <url>: share counters through Redis; in memory without it. */
  redisUrl?: string;
  /** --rate-limit-redis-failure open|closed|memory: what to do while Redis is unreachable. */
  redisFailure: FailureMode;
  /** --trusted-proxy <cidr...>: proxies whose X-Forwarded-For is believed. */
  trustedProxies: string[];
}

const FLAGS: Array<{ long: string; make: () => Option }> = [
  { long: "--region", make: () => new Option("--region <region>", "data region whose rate limits apply").choices(REGIONS).default("us") },
  {
    long: "--rate-limit-policy",
    make: () => new Option("--rate-limit-policy <file>", "YAML/JSON policy that extends or replaces the built-in rate-limit table"),
  },
  { long: "--redis-url", make: () => new Option("--redis-url <url>", "Redis for shared rate-limit counters (default: in memory)") },
  {
    long: "--rate-limit-redis-failure",
    make: () =>
      new Option("--rate-limit-redis-failure <mode>", "while Redis is unreachable: open (allow), closed (503) or memory (count locally)")
        .choices(FAILURE_MODES)
        .default("memory"),
  },
  { long: "--no-rate-limit", make: () => new Option("--no-rate-limit", "turn rate limiting off") },
  {
    long: "--trusted-proxy",
    make: () => new Option("--trusted-proxy <cidr...>", "proxy addresses/CIDRs (or loopback, private) whose X-Forwarded-For is believed").default([]),
  },
];

/**
 * Declares the rate-limit flags on a commander command. Flags the command already
 * has (say, a shared --redis-url) are left as they are and read from the same place.
 */
export function addRateLimitFlags(command: Command): Command {
  for (const flag of FLAGS) {
    if (!command.options.some((option) => option.long === flag.long)) command.addOption(flag.make());
  }
  return command;
}

/** Reads the flags back from `command.opts()`, checking what commander does not. */
export function rateLimitFlagsFrom(opts: Record<string, unknown>): RateLimitFlags {
  const region = String(opts.region ?? "us").toLowerCase();
  if (!REGIONS.includes(region as Region)) throw new Error(`--region must be one of ${REGIONS.join(", ")}, got "${region}"`);
  const failure = String(opts.rateLimitRedisFailure ?? "memory").toLowerCase();
  if (!FAILURE_MODES.includes(failure as FailureMode)) {
    throw new Error(`--rate-limit-redis-failure must be one of ${FAILURE_MODES.join(", ")}, got "${failure}"`);
  }
  const proxies = opts.trustedProxy;
  return {
    enabled: opts.rateLimit !== false,
    region: region as Region,
    policyFile: typeof opts.rateLimitPolicy === "string" ? opts.rateLimitPolicy : undefined,
    redisUrl: typeof opts.redisUrl === "string" ? opts.redisUrl : undefined,
    redisFailure: failure as FailureMode,
    trustedProxies: Array.isArray(proxies) ? proxies.map(String) : typeof proxies === "string" ? [proxies] : [],
  };
}

/**
 * Parses rate-limit flags out of an argument list (other arguments are ignored),
 * e.g. `parseRateLimitArgs(["--region", "eu", "--no-rate-limit"])`. Throws on a bad value.
 */
export function parseRateLimitArgs(argv: readonly string[]): RateLimitFlags {
  const command = addRateLimitFlags(new Command())
    .allowUnknownOption()
    .allowExcessArguments()
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  command.parse([...argv], { from: "user" });
  return rateLimitFlagsFrom(command.opts());
}
