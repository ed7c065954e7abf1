import { describe, expect, it } from "vitest";
import { generateSecretsKey, openSecret, parseSecretsKey, sealSecret } from "./secret-box.ts";

describe("secret-box", () => {
  const key = generateSecretsKey();

  it("round-trips text, including non-ASCII and empty strings", () => {
    for (const text of ["ghp_abc123", "päss wörd ✓", ""]) {
      const sealed = sealSecret(key, text);
      expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/);
      expect(openSecret(key, sealed)).toBe(text);
    }
  });

  it("never shows the plaintext and uses a fresh nonce per seal", () => {
    const a = sealSecret(key, "hunter2-hunter2");
    const b = sealSecret(key, "hunter2-hunter2");
    expect(a).not.toBe(b);
    expect(a).not.toContain("hunter2");
    expect(Buffer.from(a.split(".")[2], "base64url").toString("utf8")).not.toContain("hunter2");
  });

  it("refuses another key, a tampered value and a different context", () => {
    const sealed = sealSecret(key, "secret", "deployment:1:FOO");
    expect(openSecret(key, sealed, "deployment:1:FOO")).toBe("secret");
    expect(() => openSecret(generateSecretsKey(), sealed, "deployment:1:FOO")).toThrow(/does not open/);
    expect(() => openSecret(key, sealed, "deployment:2:FOO")).toThrow(/does not open/);
    expect(() => openSecret(key, sealed)).toThrow(/does not open/);
    const parts = sealed.split(".");
    const body = Buffer.from(parts[2], "base64url");
    body[0] ^= 1;
    parts[2] = body.toString("base64url");
    expect(() => openSecret(key, parts.join("."), "deployment:1:FOO")).toThrow(/does not open/);
    expect(() => openSecret(key, "plain text")).toThrow(/not a sealed secret/);
  });

  it("requires a 32-byte key", () => {
    expect(() => sealSecret(Buffer.alloc(16), "x")).toThrow(/32-byte/);
  });

  it("parses keys written as hex or base64, and refuses other lengths", () => {
    const raw = generateSecretsKey();
    expect(parseSecretsKey(raw.toString("hex")).equals(raw)).toBe(true);
    expect(parseSecretsKey(`${raw.toString("base64")}\n`).equals(raw)).toBe(true);
    expect(parseSecretsKey(raw.toString("base64url")).equals(raw)).toBe(true);
    expect(() => parseSecretsKey("too-short")).toThrow(/32 bytes/);
  });
});
