import type { FastifyError, FastifyInstance } from "fastify";
import { clipEchoes, clipLoc } from "./clip.ts";
import { DATE_TIME_MESSAGE } from "./date-time.ts";
import { STATUS_OF, SlipwayError, type FieldProblem } from "./errors.ts";

/**
 * How 422s are written. The agent server answers `{"detail": "<field>: <why>"}` (its
 * ErrorResponse); the control plane answers FastAPI's HTTPValidationError list.
 */
export type ValidationStyle = "message" | "fastapi";

export function installErrorHandler(app: FastifyInstance, style: ValidationStyle, notFoundHint?: NotFoundHint): void {
  app.setErrorHandler((error: FastifyError | SlipwayError, request, reply) => {
    if (error instanceof SlipwayError) {
      const status = STATUS_OF[error.code];
      reply.headers(error.headers);
      if (status >= 500) request.log.warn({ err: error }, "service refused");
      return reply.status(status).send(body(status, error.message, error.problems, style));
    }
    if (error.validation) {
      const context = LOCATION_OF[error.validationContext ?? "body"] ?? error.validationContext ?? "body";
      // No body at all (none sent, or an empty one: json-body.ts) is FastAPI's "missing".
      const problems =
        context === "body" && request.body === undefined
          ? [{ loc: ["body"], msg: "Field required", type: "missing" }]
          : error.validation.map((v) => problemFromAjv(v, context));
      const message = problems.map((p) => `${p.loc.slice(1).join(".") || p.loc[0]}: ${p.msg}`).join("; ");
      return reply.status(422).send(body(422, message, problems, style));
    }
    const status = error.statusCode ?? 500;
    if (error.code === "FST_ERR_CTP_INVALID_JSON_LENGTH" || error.code === "FST_ERR_CTP_EMPTY_JSON_BODY" || isJsonSyntax(error)) {
      const problem: FieldProblem = { loc: ["body"], msg: `invalid JSON: ${error.message}`, type: "json_invalid" };
      return reply.status(422).send(body(422, problem.msg, [problem], style));
    }
    if (status >= 400 && status < 500) {
      return reply.status(status).send(body(status, error.message, [], style));
    }
    request.log.error({ err: error }, "unhandled error");
    return reply.status(500).send({ detail: "Internal server error" });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0]!;
    const hint = notFoundHint?.(request.method, path);
    reply.status(404).send(body(404, `Not Found: ${request.method} ${path}${hint ? `. ${hint}` : ""}`, [], style));
  });
}

/** What to add to a 404 for a path a client likely meant for another server. */
export type NotFoundHint = (method: string, path: string) => string | undefined;

/** Fastify's names for request parts, as FastAPI spells them in `loc`. */
const LOCATION_OF: Record<string, string> = { body: "body", params: "path", querystring: "query", headers: "header" };

/** Every error body is written here, with what it echoes of the request cut (clip.ts). */
function body(status: number, message: string, problems: FieldProblem[], style: ValidationStyle) {
  if (status === 422 && style === "fastapi") {
    const listed = problems.length ? problems : [{ loc: ["body"], msg: message, type: "value_error" }];
    return { detail: listed.map((p) => ({ ...p, loc: clipLoc(p.loc), msg: clipEchoes(p.msg) })) };
  }
  return { detail: clipEchoes(message) };
}

/** A body that is not JSON (Fastify's parser refused it). */
export function isJsonSyntax(error: FastifyError): boolean {
  return error.statusCode === 400 && (error.name === "SyntaxError" || error.code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH" || /JSON/i.test(error.message));
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function problemFromAjv(issue: AjvIssue, context: string): FieldProblem {
  const loc: (string | number)[] = [context];
  for (const part of (issue.instancePath ?? "").split("/").slice(1)) {
    const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
    loc.push(/^\d+$/.test(key) ? Number(key) : key);
  }
  const params = issue.params ?? {};
  if (issue.keyword === "required" && typeof params.missingProperty === "string") {
    loc.push(params.missingProperty);
    return { loc, msg: "Field required", type: "missing" };
  }
  if (issue.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    loc.push(params.additionalProperty);
    return { loc, msg: "Extra inputs are not permitted", type: "extra_forbidden" };
  }
  if (issue.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return { loc, msg: `Input should be ${params.allowedValues.map((v) => `'${v}'`).join(", ")}`, type: "enum" };
  }
  if (issue.keyword === "format" && params.format === "date-time") return { loc, msg: DATE_TIME_MESSAGE, type: "datetime_parsing" };
  return { loc, msg: issue.message ?? "invalid value", type: issue.keyword ?? "value_error" };
}
