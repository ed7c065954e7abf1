/**
 * The one place a request target is put in the form everything after it sees: Fastify
 * routes on it and every hook (the rate limiter, auth, logs) reads it as `request.url`,
 * so nothing can key on one spelling while the router serves another.
 *
 * - The absolute form (`GET http://host/v2/x`, which HTTP/1.1 servers must accept) is
 *   cut to its path: the router would serve it as `/v2/x` anyway.
 * - An alias prefix (the control plane's `/api-host`) is taken off, so `/api-host/v2/x`
 *   is the route `/v2/x` itself, not a copy of it with counters of its own. Matched
 *   per segment, case-sensitively as routes are, after percent-decoding the segment
 *   as the router does (`/%61pi-host/v2/x` too).
 *
 * What the router itself refuses (`//v2/x`, `/v2/x/`, `/V2/x`) is left alone: those
 * answer 404, and the rate limiter's own normalization (ratelimit/path-pattern.ts)
 * still counts them under the rule of the path they resemble.
 */
export interface PathAlias {
  /** The prefix that names the same routes, e.g. "/api-host". */
  prefix: string;
  /** Full paths under the prefix that are routes of their own (e.g. "/api-host/openapi.json"). */
  own?: readonly string[];
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

export function canonicalUrl(url: string, aliases: readonly PathAlias[] = []): string {
  let target = url;
  if (target.charCodeAt(0) !== 47 /* "/" */) {
    // Anything else that is not absolute (`*` of `OPTIONS *`) is left to the router.
    const authority = ABSOLUTE_FORM.exec(target);
    if (!authority) return target;
    target = target.slice(authority[0].length);
    if (target.charCodeAt(0) !== 47) target = `/${target}`;
  }
  for (const alias of aliases) {
    const rest = afterPrefix(target, alias.prefix);
    if (rest === undefined) continue;
    const path = rest.split(/[?#]/, 1)[0]!;
    if (alias.own?.includes(alias.prefix + (path === "/" ? "" : path))) return target;
    return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
  }
  return target;
}

/** What follows `prefix` when the target's first segment is it (literally or percent-encoded), else undefined. */
function afterPrefix(target: string, prefix: string): string | undefined {
  const end = firstSegmentEnd(target);
  const segment = target.slice(0, end);
  if (segment !== prefix && !(segment.includes("%") && decoded(segment) === prefix)) return undefined;
  return target.slice(end);
}

function firstSegmentEnd(target: string): number {
  for (let i = 1; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 47 || c === 63 || c === 35) return i; // "/", "?", "#"
  }
  return target.length;
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
