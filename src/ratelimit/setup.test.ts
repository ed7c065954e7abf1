import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testRedisUrl } from "../../test/support/backends.ts";
import { parseRateLimitArgs } from "./cli-options.ts";
import { PolicyError } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import { rateLimitOptionsFromFlags } from "./setup.ts";
import { FailoverStore } from "./stores/failover.ts";
import { MemoryStore } from "./stores/memory.ts";
import { RedisStore } from "./stores/redis.ts";

const deps = { resolveIdentity: () => ({}) };

describe("options from flags", () => {
  it("defaults to the built-in table in memory", async () => {
    const options = await rateLimitOptionsFromFlags(parseRateLimitArgs([]), deps);
    expect(options).toMatchObject({ enabled: true, region: "us", policy: DEFAULT_RULES });
    expect(options.store).toBeInstanceOf(MemoryStore);
  });

  it("wraps Redis in the chosen failure mode", async () => {
    const options = await rateLimitOptionsFromFlags(parseRateLimitArgs(["--redis-url", testRedisUrl(), "--rate-limit-redis-failure", "open"]), deps);
    try {
      expect(options.store).toBeInstanceOf(FailoverStore);
      expect((options.store as FailoverStore).primary).toBeInstanceOf(RedisStore);
    } finally {
      await options.store.close();
    }
  });

  it("starts while Redis is unreachable, saying so, and applies the failure mode", async () => {
    const warnings: string[] = [];
    const options = await rateLimitOptionsFromFlags(parseRateLimitArgs(["--redis-url", "redis://127.0.0.1:1", "--rate-limit-redis-failure", "closed"]), {
      ...deps,
      log: { warn: (_object, message) => warnings.push(message) },
    });
    try {
      expect(warnings).toEqual([expect.stringContaining("not reachable at start-up")]);
      await expect(options.store.hit([{ key: "k", limit: 1, windowMs: 1_000 }], Date.now())).rejects.toThrow(/unavailable/);
    } finally {
      await options.store.close();
    }
  });

  it("stops on a malformed policy file, naming the rule", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "slipway-policy-")), "limits.yaml");
    writeFileSync(file, "rules:\n  - name: commits-api-key\n    limit: { us: 5/60, eu: often }\n");
    const start = rateLimitOptionsFromFlags(parseRateLimitArgs(["--rate-limit-policy", file]), deps);
    await expect(start).rejects.toBeInstanceOf(PolicyError);
    await expect(start).rejects.toThrow(`${file}: rule 1 ("commits-api-key"): limit "often"`);
  });

  it("stops on a bad trusted proxy", async () => {
    await expect(rateLimitOptionsFromFlags(parseRateLimitArgs(["--trusted-proxy", "10.0.0.0/40"]), deps)).rejects.toThrow(/10\.0\.0\.0\/40/);
  });
});
