import { describe, expect, it } from "vitest";
import { clipEchoes, clipLoc, MAX_ECHO, MAX_MESSAGE } from "./clip.ts";

/** A lone surrogate, as a half of a split pair would leave. */
const LONE = /\p{Cs}/u;

describe("clipEchoes", () => {
  it("leaves ordinary messages alone", () => {
    const message = 'Graph "agent" not found; thread 1f0c2d4e-0000-4000-8000-000000000000 is busy';
    expect(clipEchoes(message)).toBe(message);
  });

  it("cuts a long echoed value to its first characters and an ellipsis, keeping the rest of the message", () => {
    const clipped = clipEchoes(`Graph "${"g".repeat(1024 * 1024)}" not found`);
    expect(clipped).toBe(`Graph "${"g".repeat(MAX_ECHO)}…" not found`);
  });

  it("caps a message whose long value has spaces in it, keeping its head and tail", () => {
    const clipped = clipEchoes(`Assistant "${"a ".repeat(100_000)}" not found`);
    expect(clipped.length).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(clipped.startsWith('Assistant "a a')).toBe(true);
    expect(clipped.endsWith('" not found')).toBe(true);
  });

  it("never splits a surrogate pair", () => {
    const clipped = clipEchoes(`x${"😀".repeat(300)}`);
    expect(clipped).not.toMatch(LONE);
    const capped = clipEchoes("😀 ".repeat(5000));
    expect(capped).not.toMatch(LONE);
  });
});

describe("clipLoc", () => {
  it("cuts long segments of a location", () => {
    expect(clipLoc(["body", "k".repeat(5000), 3])).toEqual(["body", `${"k".repeat(MAX_ECHO)}…`, 3]);
  });
});
