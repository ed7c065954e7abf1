import { describe, expect, it } from "vitest";
import { apiKeyLabel, apiKeyMatches, generateApiKey, hashApiKey, parseApiKey } from "./api-key.ts";

describe("API keys", () => {
  it("generates distinct slw_ keys whose lookup id parses back", () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^slw_[0-9a-f]{16}[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.toBe(b.key);
    expect(parseApiKey(a.key)).toEqual({ lookupId: a.lookupId });
  });

  it("stores a sha256 hash, never the key", () => {
    const { key, hash } = generateApiKey();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(20));
  });

  it("matches only the exact key", () => {
    const { key, hash } = generateApiKey();
    expect(apiKeyMatches(key, hash)).toBe(true);
    const altered = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    expect(apiKeyMatches(altered, hash)).toBe(false);
    expect(apiKeyMatches(key, "00")).toBe(false);
  });

  it("rejects malformed keys before any lookup", () => {
    for (const bad of ["", "slw_", "lsv2_pt_123", "slw_XYZ", `${generateApiKey().key}x`, ` ${generateApiKey().key}`]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it("labels a key without its secret", () => {
    const { key, lookupId } = generateApiKey();
    const label = apiKeyLabel(lookupId);
    expect(key.startsWith(label.slice(0, -1))).toBe(true);
    expect(label.length).toBeLessThan(25);
  });
});
