import { describe, expect, it } from "vitest";
import { durabilityOf, streamModesOf } from "./run-defaults.ts";

describe("a run's defaults", () => {
  it("streams values unless told otherwise, each mode once, in the order asked", () => {
    expect(streamModesOf(undefined)).toEqual(["values"]);
    expect(streamModesOf(null)).toEqual(["values"]);
    expect(streamModesOf([])).toEqual(["values"]);
    expect(streamModesOf("updates")).toEqual(["updates"]);
    expect(streamModesOf(["updates", "values", "updates"])).toEqual(["updates", "values"]);
  });

  it("takes durability as given, or exit for checkpoint_during: false, or async", () => {
    expect(durabilityOf({ durability: "sync", checkpoint_during: false })).toBe("sync");
    expect(durabilityOf({ checkpoint_during: false })).toBe("exit");
    expect(durabilityOf({ checkpoint_during: true })).toBe("async");
    expect(durabilityOf({})).toBe("async");
  });
});
