import type { FastifyReply } from "fastify";
import type { RuleState } from "./evaluate.ts";

/**
 * Headers in the syntax of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers): the policy as quota `q` per window `w`
 * seconds, and its state as `r` requests remaining with `t` seconds until reset.
 * Rule names are restricted (compile.ts) to characters that need no escaping here.
 */
function rateLimitHeaders(state: RuleState): Record<string, string> {
  const { rule, remaining, resetSeconds } = state;
  return {
    "ratelimit-policy": `"${rule.name}";q=${rule.limit};w=${rule.windowSeconds}`,
    ratelimit: `"${rule.name}";r=${remaining};t=${resetSeconds}`,
  };
}

/**
 * Sets the headers of an allowed request on the Fastify reply. Not on the raw response:
 * a header set there makes Node re-validate every header of the reply when it is written
 * (its slow path), which cost about a fifth of the throughput of a small endpoint in
 * bench/ratelimit.ts. Hijacked replies (SSE) copy `reply.getHeaders()` into their head.
 */
export function setRateLimitHeaders(reply: FastifyReply, state: RuleState): void {
  const { rule, remaining, resetSeconds } = state;
  reply.header("ratelimit-policy", `"${rule.name}";q=${rule.limit};w=${rule.windowSeconds}`);
  reply.header("ratelimit", `"${rule.name}";r=${remaining};t=${resetSeconds}`);
}

/** The 429 headers: the rule's state plus `Retry-After` in whole seconds (at least 1). */
export function rejectionHeaders(state: RuleState): Record<string, string> {
  return { ...rateLimitHeaders(state), "retry-after": String(state.resetSeconds) };
}

/** The `detail` of a 429, naming the category and the limit. */
export function rejectionDetail(state: RuleState): string {
  const { rule, resetSeconds } = state;
  return (
    `Rate limit exceeded: ${rule.category} allows ${rule.limit} request${rule.limit === 1 ? "" : "s"} ` +
    `per ${rule.windowSeconds} seconds; retry in ${resetSeconds} second${resetSeconds === 1 ? "" : "s"}.`
  );
}

export const EXPOSED_HEADERS = ["RateLimit", "RateLimit-Policy", "Retry-After"];
