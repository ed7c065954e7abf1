import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Platform API keys: `slw_<lookup><secret>`.
 *
 * - `lookup`: 16 hex characters (8 random bytes), stored in clear and indexed, so a key
 *   is found with one equality lookup instead of hashing against every row.
 * - `secret`: 43 base64url characters (32 random bytes).
 *
 * Only the SHA-256 of the whole key is stored. A slow password hash (bcrypt, scrypt)
 * would add nothing: the key carries 256 random bits, so no dictionary or brute-force
 * attack applies to its hash, and every request pays the verification cost.
 *
 * @example
 *   const { key, lookupId, hash } = generateApiKey();   // show `key` once, store lookupId + hash
 *   parseApiKey(key)?.lookupId === lookupId;
 *   apiKeyMatches(key, hash) === true;
 */
const API_KEY_PREFIX = "slw_";
const API_KEY_SHAPE = /^slw_([0-9a-f]{16})[A-Za-z0-9_-]{43}$/;

interface GeneratedApiKey {
  /** The full key, shown to its owner once and never stored. */
  key: string;
  lookupId: string;
  hash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const lookupId = randomBytes(8).toString("hex");
  const key = `${API_KEY_PREFIX}${lookupId}${randomBytes(32).toString("base64url")}`;
  return { key, lookupId, hash: hashApiKey(key) };
}

/** The lookup id of a well-formed key, or null for anything else (so callers answer 401 without a query). */
export function parseApiKey(candidate: string): { lookupId: string } | null {
  const match = API_KEY_SHAPE.exec(candidate);
  return match ? { lookupId: match[1] } : null;
}

/** Hex SHA-256 of the full key: what the api_keys table stores. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Constant-time comparison of a presented key against a stored hash. */
export function apiKeyMatches(candidate: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(candidate), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** A short, safe-to-log label for a key: its prefix and lookup id, never the secret. */
export function apiKeyLabel(lookupId: string): string {
  return `${API_KEY_PREFIX}${lookupId}…`;
}
