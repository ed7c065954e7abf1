/**
 * The one error family services throw. Services never see HTTP; `error-handler.ts`
 * maps each code to a status in one place.
 */
export type ErrorCode =
  | "bad_request" // 400
  | "unauthorized" // 401
  | "forbidden" // 403
  | "not_found" // 404
  | "conflict" // 409
  | "payload_too_large" // 413
  | "invalid" // 422
  | "rate_limited" // 429
  | "not_implemented" // 501
  | "unavailable"; // 503

export interface FieldProblem {
  /** Where the problem is, e.g. ["body", "source_config", "repo_url"]. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class SlipwayError extends Error {
  readonly code: ErrorCode;
  /** For `invalid`: the offending fields. */
  readonly problems: FieldProblem[];
  /** Extra response headers (Retry-After for rate limits, ...). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { problems?: FieldProblem[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = "SlipwayError";
    this.code = code;
    this.problems = options.problems ?? [];
    this.headers = options.headers ?? {};
  }
}

export const STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  invalid: 422,
  rate_limited: 429,
  not_implemented: 501,
  unavailable: 503,
};

export const notFound = (message: string) => new SlipwayError("not_found", message);
export const conflict = (message: string) => new SlipwayError("conflict", message);
export const badRequest = (message: string) => new SlipwayError("bad_request", message);
export const forbidden = (message: string) => new SlipwayError("forbidden", message);

const REQUEST_PARTS = new Set(["body", "query", "path", "header"]);

/**
 * A 422 about one field: `loc` is its path, e.g. ["body", "multitask_strategy"] or
 * ["query", "offset"]. The message names the field without the request part, as the
 * validator's messages do ("offset: must be <= ...").
 */
export function invalidField(loc: (string | number)[], msg: string, type = "value_error"): SlipwayError {
  const field = loc.length > 1 && REQUEST_PARTS.has(String(loc[0])) ? loc.slice(1) : loc;
  const where = field.filter((part) => part !== "body").join(".");
  return new SlipwayError("invalid", where ? `${where}: ${msg}` : msg, { problems: [{ loc, msg, type }] });
}
