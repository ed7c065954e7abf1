import { describe, expect, it } from "vitest";
import { eventPayloads, joinParts, PART_CHARS, readRelayMessage, splitText, type PartMessage } from "./relay-protocol.ts";

describe("relay protocol", () => {
  it("sends a small event whole and reads it back", () => {
    const [payload, ...rest] = eventPayloads("me", "run-1", 2, 7, "values", { n: 1 });
    expect(rest).toEqual([]);
    expect(readRelayMessage(payload!)).toEqual({ k: "e", s: "me", r: "run-1", t: 2, i: 7, e: "values", d: { n: 1 } });
  });

  it("cuts a large event into parts under the payload limit that join back into it", () => {
    const data = { text: "é😀".repeat(5_000) };
    const payloads = eventPayloads("me", "run-1", 1, 3, "custom", data);
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    const parts = payloads.map((p) => readRelayMessage(p) as PartMessage);
    expect(parts.map((p) => [p.k, p.j, p.n])).toEqual(parts.map((_, j) => ["p", j, payloads.length]));
    expect(joinParts(parts.map((p) => p.c))).toEqual({ event: "custom", data });
  });

  it("never splits a surrogate pair", () => {
    const pieces = splitText("a😀".repeat(10), 4);
    expect(pieces.join("")).toBe("a😀".repeat(10));
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(4);
    for (const piece of pieces) expect(() => encodeURIComponent(piece)).not.toThrow();
    expect(PART_CHARS * 3).toBeLessThan(8_000);
  });

  it("ignores payloads that are not its messages", () => {
    for (const payload of ["not json", "null", "[]", '{"k":"e"}', '{"k":"z","s":"a","r":"b","t":1}', '{"k":"w","s":"a","r":5,"t":1}']) {
      expect(readRelayMessage(payload), payload).toBeUndefined();
    }
    expect(readRelayMessage('{"k":"w","s":"a","r":"b","t":1,"a":0}')).toEqual({ k: "w", s: "a", r: "b", t: 1, a: 0 });
  });
});
