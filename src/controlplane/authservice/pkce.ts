import { createHash, randomBytes } from "node:crypto";

/** Random values of an authorization-code flow (RFC 6749 §10.10, RFC 7636 §4). */

/** 32 random bytes, base64url: 43 characters, within RFC 7636's 43 to 128. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

export function codeChallenge(verifier: string, method: string): string {
  return method === "plain" ? verifier : createHash("sha256").update(verifier).digest("base64url");
}

/** The state is kept only as this hash: a database read does not yield a usable state. */
export function stateHash(state: string): string {
  return createHash("sha256").update(state).digest("hex");
}
