import { describe, expect, it } from "vitest";
import { catchUpSecondsFromEnv, DEFAULT_CATCH_UP_SECONDS } from "./index.ts";

describe("SLIPWAY_CRON_CATCH_UP_SECONDS", () => {
  it("defaults when unset, reads seconds, and refuses what does not read", () => {
    expect(catchUpSecondsFromEnv({})).toBe(DEFAULT_CATCH_UP_SECONDS);
    expect(catchUpSecondsFromEnv({ SLIPWAY_CRON_CATCH_UP_SECONDS: "5" })).toBe(5);
    expect(catchUpSecondsFromEnv({ SLIPWAY_CRON_CATCH_UP_SECONDS: "0" })).toBe(0);
    expect(() => catchUpSecondsFromEnv({ SLIPWAY_CRON_CATCH_UP_SECONDS: "soon" })).toThrow(/SLIPWAY_CRON_CATCH_UP_SECONDS .* not "soon"/);
    expect(() => catchUpSecondsFromEnv({ SLIPWAY_CRON_CATCH_UP_SECONDS: "-1" })).toThrow(/0 or more/);
  });
});
