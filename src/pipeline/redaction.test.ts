import { describe, expect, it } from "vitest";
import { isRedactable, unredactedSecrets } from "./redaction.ts";

describe("which secret values the logs hide", () => {
  it("hides values that look like secrets", () => {
    for (const value of ["sk-abc123", "hunter22", "do-not-print-me", "0451-abcd", "v1.2.3-rc"]) expect(isRedactable(value), value).toBe(true);
  });

  it("leaves booleans, plain numbers and values under 6 characters alone", () => {
    for (const value of ["false", "true", "FALSE", "yes", "no", "null", "undefined", "1", "8080", "123456", "3.14159", "-42.5", "1e10", "abcde", ""]) {
      expect(isRedactable(value), value).toBe(false);
    }
  });

  it("names the secrets shown as they are (an empty value hides nothing and shows nothing)", () => {
    expect(unredactedSecrets({ DEBUG: "false", PORT: "100000", KEY: "sk-live-secret", SHORT: "abc", EMPTY: "" })).toEqual(["DEBUG", "PORT", "SHORT"]);
  });
});
