import { describe, expect, it } from "vitest";
import { containment, FilterError, matches } from "./filters.ts";

describe("custom auth filters", () => {
  it("match equality, $eq and $contains as the vendor documents them", () => {
    const metadata = { owner: "alice", tags: ["a", "b"] };
    expect(matches(metadata, { owner: "alice" })).toBe(true);
    expect(matches(metadata, { owner: { $eq: "alice" } })).toBe(true);
    expect(matches(metadata, { owner: "bob" })).toBe(false);
    expect(matches(metadata, { tags: { $contains: "a" } })).toBe(true);
    expect(matches(metadata, { tags: { $contains: ["a", "b"] } })).toBe(true);
    expect(matches(metadata, { tags: { $contains: ["a", "c"] } })).toBe(false);
    expect(matches(metadata, { owner: { $contains: "alice" } })).toBe(false);
    expect(matches(metadata, undefined)).toBe(true);
  });

  it("fail closed where the vendor's matcher lets everything through", () => {
    // The vendor skips `$eq` when its operand is falsy: {$eq: ""} matched every resource.
    expect(matches({ owner: "alice" }, { owner: { $eq: "" } })).toBe(false);
    expect(matches({}, { owner: { $eq: "" } })).toBe(false);
    // And ignores operators it does not know.
    expect(() => matches({ owner: "alice" }, { owner: { $ne: "bob" } })).toThrow(FilterError);
    expect(() => matches({ owner: "alice" }, { owner: {} })).toThrow(FilterError);
    // A missing field never equals a value.
    expect(matches({}, { owner: "alice" })).toBe(false);
    expect(matches(null, { owner: "alice" })).toBe(false);
  });

  it("merge into a search's own metadata filter so that the caller cannot widen it", () => {
    expect(containment({ owner: "alice" }, { topic: "x" })).toEqual({ topic: "x", owner: "alice" });
    expect(containment({ owner: "alice" }, null)).toEqual({ owner: "alice" });
    expect(containment({ tags: { $contains: "a" } }, { tags: ["b"] })).toEqual({ tags: ["b", "a"] });
    // Asking for another owner than the filter allows finds nothing, rather than either.
    const conflicting = containment({ owner: "alice" }, { owner: "bob" });
    expect(Object.keys(conflicting)).toHaveLength(1);
    expect(Object.keys(conflicting)[0]).toMatch(/^slipway-auth-nothing-/);
  });
});
