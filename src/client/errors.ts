import type { Static } from "@sinclair/typebox";
import type { HTTPValidationError } from "../controlplane/openapi.ts";

/** One problem of a 422, as FastAPI reports it: where (`loc`), what (`msg`), which rule (`type`). */
export type ValidationProblem = Static<typeof HTTPValidationError>["detail"][number];

/**
 * The control plane answered with an error status. `detail` is the server's own text
 * (`{"detail": "..."}`), or its list of field problems for a 422.
 */
export class ControlPlaneError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly problems: ValidationProblem[];
  readonly method: string;
  readonly path: string;
  /** Seconds from a Retry-After header, when the server sent one. */
  readonly retryAfterSeconds?: number;

  constructor(input: { status: number; body: unknown; method: string; path: string; retryAfterSeconds?: number }) {
    const { detail, problems } = detailOf(input.body, input.status);
    super(`${input.method} ${input.path}: HTTP ${input.status}: ${detail}`);
    this.name = "ControlPlaneError";
    this.status = input.status;
    this.detail = detail;
    this.problems = problems;
    this.method = input.method;
    this.path = input.path;
    this.retryAfterSeconds = input.retryAfterSeconds;
  }
}

/**
 * No answer from the control plane: refused connection, unknown host, reset, timeout.
 * `mayHaveApplied` says whether the request may have taken effect anyway (a write that was sent
 * but never answered), so a caller can tell the user to check before repeating it.
 */
export class ConnectionError extends Error {
  readonly url: string;
  readonly code?: string;
  readonly reason: string;
  readonly mayHaveApplied: boolean;

  constructor(input: { url: string; cause: unknown; write: boolean }) {
    const { code, reason } = networkReason(input.cause);
    super(`cannot reach ${input.url}: ${reason}`);
    this.name = "ConnectionError";
    this.url = input.url;
    this.code = code;
    this.reason = reason;
    // A refused or unresolved connection never carried the request.
    this.mayHaveApplied = input.write && !(code !== undefined && NOT_SENT.has(code));
  }
}

const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** A field path of a 422 without the request part: ["body","source_config","repo_url"] → "source_config.repo_url". */
export function fieldOf(problem: ValidationProblem): string {
  const loc = problem.loc.length > 1 && ["body", "query", "path", "header"].includes(String(problem.loc[0])) ? problem.loc.slice(1) : problem.loc;
  return loc.map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`)).join("");
}

function detailOf(body: unknown, status: number): { detail: string; problems: ValidationProblem[] } {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === "string") return { detail, problems: [] };
  if (Array.isArray(detail)) {
    const problems = detail.filter((p): p is ValidationProblem => typeof p === "object" && p !== null && Array.isArray(p.loc) && typeof p.msg === "string");
    return { detail: problems.map((p) => `${fieldOf(p) || "request"}: ${p.msg}`).join("; ") || JSON.stringify(detail), problems };
  }
  if (typeof body === "string" && body.trim()) return { detail: body.trim().slice(0, 2000), problems: [] };
  return { detail: body === undefined ? `no error detail (status ${status})` : JSON.stringify(body).slice(0, 2000), problems: [] };
}

/** The most telling words of a fetch failure: undici hides the socket error in `cause`. */
function networkReason(error: unknown): { code?: string; reason: string } {
  const seen: string[] = [];
  for (let e = error as { message?: string; code?: string; cause?: unknown; name?: string } | undefined; e && seen.length < 4; e = e.cause as typeof e) {
    if (e.name === "TimeoutError") return { code: "ETIMEDOUT", reason: "no answer in time (timeout)" };
    if (e.code) return { code: e.code, reason: `${describeCode(e.code)} (${e.code})` };
    if (e.message && e.message !== "fetch failed") seen.push(e.message);
  }
  return { reason: seen[0] ?? "the connection failed" };
}

function describeCode(code: string): string {
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused: nothing listens there";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "the connection was closed before an answer";
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return "the connection timed out";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "the host is unreachable";
    default:
      return "the connection failed";
  }
}
