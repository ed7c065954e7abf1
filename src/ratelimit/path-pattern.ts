import type { RequestMatcher } from "./rules.ts";

// Match expressions: the table's "Match (method)" column made exact.
//
//   [METHOD] [PATTERN]
//
// METHOD is an HTTP method or ANY; left out, any method matches (HEAD counts as GET,
// since Fastify answers HEAD with the GET handler). PATTERN is one of
//   /a/b            the path /a/b or anything below it, whole segments only
//   exactly /a/b    the path /a/b and nothing else
//   containing /a   any path with "/a" somewhere in it
//   */a/b           any path ending in "/a/b"
// and left out, any path matches. In the first two forms a `{uuid}` segment stands
// for one UUID. An optional leading `/api/v1` on the request path is ignored.

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

/** Thrown with a message that says what is wrong with one expression. */
export class MatchSyntaxError extends Error {}

export function parseMatch(text: string): RequestMatcher {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) throw new MatchSyntaxError("empty match expression");
  let method: string | undefined;
  const first = words[0]!.toUpperCase();
  if (first === "ANY" || METHODS.has(first)) {
    method = first === "ANY" ? undefined : first;
    words.shift();
  } else if (/^[A-Za-z]+$/.test(words[0]!) && words[0] !== "containing" && words[0] !== "exactly") {
    throw new MatchSyntaxError(`"${words[0]}" is not an HTTP method (use GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS or ANY)`);
  }
  if (words.length === 0) return { method, text };
  return { method, path: parsePattern(words), text, firstSegment: anchoredFirstSegment(words) };
}

function anchoredFirstSegment(words: string[]): string | undefined {
  const path = words[0] === "exactly" ? words[1]! : words[0]!;
  if (!path.startsWith("/")) return undefined;
  const first = path.split("/").filter(Boolean)[0];
  return first === undefined || first === "{uuid}" ? undefined : first;
}

function parsePattern(words: string[]): (path: string) => boolean {
  const [head, ...rest] = words;
  if (head === "containing" || head === "exactly") {
    if (rest.length !== 1) throw new MatchSyntaxError(`"${head}" takes exactly one path`);
    const literal = rest[0]!;
    if (head === "exactly") return anchored(literal, true);
    refuseBraces(literal);
    return (path) => path.includes(literal);
  }
  if (rest.length) throw new MatchSyntaxError(`unexpected "${rest.join(" ")}" after the path`);
  if (head!.startsWith("*/")) {
    const suffix = head!.slice(1);
    refuseBraces(suffix);
    if (suffix.length < 2) throw new MatchSyntaxError(`"${head}" names no path after the star`);
    return (path) => path.endsWith(suffix);
  }
  return anchored(head!, false);
}

function anchored(pattern: string, exact: boolean): (path: string) => boolean {
  if (!pattern.startsWith("/")) throw new MatchSyntaxError(`path "${pattern}" must start with "/"`);
  const segments = pattern.split("/").slice(1).filter(Boolean);
  for (const segment of segments) if (segment !== "{uuid}") refuseBraces(segment);
  const literal = `/${segments.join("/")}`;
  // Plain string tests when there is no placeholder: every request runs every
  // pattern, and startsWith is several times cheaper than a regular expression.
  if (segments.length === 0) return exact ? (path) => path === "/" : () => true;
  if (!segments.includes("{uuid}")) {
    const below = `${literal}/`;
    return exact ? (path) => path === literal : (path) => path === literal || path.startsWith(below);
  }
  const body = segments.map((segment) => (segment === "{uuid}" ? UUID : escapeRegExp(segment))).join("/");
  const regex = new RegExp(`^/${body}${exact ? "$" : "(?:/|$)"}`);
  const lead = literal.slice(0, literal.indexOf("{uuid}"));
  return (path) => path.startsWith(lead) && regex.test(path);
}

function refuseBraces(text: string): void {
  if (/[{}]/.test(text)) throw new MatchSyntaxError(`"${text}": the only placeholder is a whole {uuid} segment of a plain or "exactly" path`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The forms of a request path that rules are tested against: the normalized path,
 * and without its `/api/v1` prefix when it has one. Normalizing (no query, no
 * repeated or trailing slashes, percent-escapes decoded) keeps `//runs/stats/` or
 * `/runs/%73tats` from slipping past a rule written for `/runs/stats`.
 */
export function pathForms(url: string): string[] {
  // (callers index rules by a form's first segment: see rule-index.ts)
  const path = normalizePath(url);
  if (path === "/api/v1") return [path, "/"];
  if (path.startsWith("/api/v1/")) return [path, path.slice(7)];
  return [path];
}

export function normalizePath(url: string): string {
  let end = url.length;
  const query = url.indexOf("?");
  if (query !== -1) end = query;
  const hash = url.indexOf("#");
  if (hash !== -1 && hash < end) end = hash;
  let path = url.slice(0, end);
  // Fast path: the common clean path needs no work.
  if (!path.includes("%") && !path.includes("//") && (path.length === 1 || !path.endsWith("/")) && path.startsWith("/")) return path;
  const segments = path.split("/").filter(Boolean).map(decodeSegment);
  path = `/${segments.join("/")}`;
  return path;
}

function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    // An encoded slash stays encoded so decoding never adds a segment.
    return decodeURIComponent(segment.replace(/%2f/gi, "%252F"));
  } catch {
    return segment;
  }
}
