import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addRateLimitFlags, parseRateLimitArgs, rateLimitFlagsFrom } from "./cli-options.ts";

describe("rate-limit flags", () => {
  it("defaults to on, US, memory, no proxies", () => {
    expect(parseRateLimitArgs([])).toEqual({
      enabled: true,
      region: "us",
      policyFile: undefined,
      redisUrl: undefined,
      redisFailure: "memory",
      trustedProxies: [],
    });
  });

  it("reads every flag, ignoring other arguments", () => {
    const flags = parseRateLimitArgs([
      "--port",
      "8123",
      "--region",
      "eu",
      "--rate-limit-policy",
      "limits.yaml",
      "--redis-url",
      "redis://r:6379",
      "--rate-limit-redis-failure",
      "closed",
      "--no-rate-limit",
      "--trusted-proxy",
      "10.0.0.0/8",
      "loopback",
    ]);
    expect(flags).toEqual({
      enabled: false,
      region: "eu",
      policyFile: "limits.yaml",
      redisUrl: "redis://r:6379",
      redisFailure: "closed",
      trustedProxies: ["10.0.0.0/8", "loopback"],
    });
  });

  it("refuses values outside the choices", () => {
    expect(() => parseRateLimitArgs(["--region", "asia"])).toThrow(/asia/);
    expect(() => parseRateLimitArgs(["--rate-limit-redis-failure", "maybe"])).toThrow(/maybe/);
    expect(() => rateLimitFlagsFrom({ region: "mars" })).toThrow(/--region must be one of us, eu/);
  });

  it("leaves flags a command already declares, and reads them from the same options", () => {
    const command = new Command().option("--redis-url <url>", "shared with the run streams").exitOverride();
    addRateLimitFlags(command);
    expect(command.options.filter((option) => option.long === "--redis-url")).toHaveLength(1);
    command.parse(["--redis-url", "redis://shared", "--trusted-proxy", "private"], { from: "user" });
    expect(rateLimitFlagsFrom(command.opts())).toMatchObject({ redisUrl: "redis://shared", trustedProxies: ["private"] });
  });
});
