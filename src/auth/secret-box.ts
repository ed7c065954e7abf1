import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets at rest (integration tokens, webhook secrets, OAuth client secrets,
 * deployment secrets): AES-256-GCM with a fresh 96-bit nonce per value.
 *
 * Sealed form: `v1.<nonce>.<ciphertext>.<tag>`, each part base64url. The version
 * prefix leaves room for key rotation later (`v2` could name a key id).
 *
 * `context` is optional associated data: pass something that names the owner
 * (e.g. `deployment:<id>:FOO`) and a sealed value copied onto another row will
 * not open there.
 *
 * @example
 *   const key = generateSecretsKey();
 *   const sealed = sealSecret(key, "ghp_...");
 *   openSecret(key, sealed) === "ghp_..."
 */
export function sealSecret(key: Buffer, plaintext: string, context?: string): string {
  assertKey(key);
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  if (context !== undefined) cipher.setAAD(Buffer.from(context, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ["v1", nonce, ciphertext, tag].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
}

/** Reverses `sealSecret`; throws when the value was tampered with or sealed under another key or context. */
export function openSecret(key: Buffer, sealed: string, context?: string): string {
  assertKey(key);
  const parts = sealed.split(".");
  if (parts.length !== 4 || parts[0] !== "v1") throw new Error("not a sealed secret (expected v1.<nonce>.<ciphertext>.<tag>)");
  const [, nonce, ciphertext, tag] = parts.map((part) => Buffer.from(part, "base64url"));
  if (nonce.length !== 12 || tag.length !== 16) throw new Error("not a sealed secret (bad nonce or tag length)");
  const decipher = createDecipheriv("aes-256-gcm", key, nonce);
  if (context !== undefined) decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("sealed secret does not open with this key (wrong key, context or tampered value)");
  }
}

/** 32 random bytes, the size AES-256 needs. */
export function generateSecretsKey(): Buffer {
  return randomBytes(32);
}

/**
 * Reads a key written as 64 hex characters or as base64/base64url of 32 bytes
 * (what `SLIPWAY_SECRETS_KEY` and the `secrets.key` file hold).
 */
export function parseSecretsKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) {
    throw new Error("secrets key must be 32 bytes, written as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)");
  }
  return key;
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== 32) throw new Error("secrets key must be a 32-byte Buffer");
}
