import { EXPOSED_HEADERS as RATE_LIMIT_EXPOSED } from "../ratelimit/headers.ts";

/**
 * `Access-Control-Expose-Headers` with `names` added to what is already listed, without
 * repeating any (names compare case-insensitively). Several layers add to this list
 * (the rate limiter, CORS, SSE replies), so each must add, never replace. A "*" already
 * there is not enough: it means nothing on credentialed requests.
 */
export function withExposed(existing: string | number | string[] | undefined, names: readonly string[]): string {
  if (existing === undefined || existing === "") return names.join(", ");
  const listed = String(existing)
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const lower = new Set(listed.map((name) => name.toLowerCase()));
  for (const name of names) {
    if (lower.has(name.toLowerCase())) continue;
    listed.push(name);
    lower.add(name.toLowerCase());
  }
  return listed.join(", ");
}

/**
 * What an agent server's answers expose to browsers whatever `http.cors` says, as the
 * vendor's server does (the run's location, search pagination), with the rate limiter's
 * headers. The router's own answers for a deployment expose the same.
 */
export const AGENT_EXPOSED_HEADERS: readonly string[] = ["Content-Location", "Location", "X-Pagination-Total", "X-Pagination-Next", ...RATE_LIMIT_EXPOSED];
