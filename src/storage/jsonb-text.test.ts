import { describe, expect, it } from "vitest";
import { jsonbText, withoutNul } from "./jsonb-text.ts";

describe("JSON text for jsonb", () => {
  it("drops NUL characters from strings and keys, and nothing else", () => {
    const text = jsonbText({ "k\u0000ey": "a\u0000b\u0000", list: ["\u0000", "plain"], n: 1 });
    expect(JSON.parse(text)).toEqual({ key: "ab", list: ["", "plain"], n: 1 });
  });

  it("keeps a backslash followed by u0000 as the text it is", () => {
    const value = { path: "c:\\u0000", both: "\\\u0000x" };
    expect(JSON.parse(jsonbText(value))).toEqual({ path: "c:\\u0000", both: "\\x" });
  });

  it("returns text without NUL untouched, and undefined for undefined", () => {
    const text = JSON.stringify({ a: 'é\n\t"' });
    expect(withoutNul(text)).toBe(text);
    expect(jsonbText(undefined)).toBeUndefined();
  });
});
