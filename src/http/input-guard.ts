import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidField } from "./errors.ts";

/**
 * How deep request JSON may nest. LangGraph inputs, configs and metadata nest a handful
 * of levels (messages → content blocks → fields); 100 leaves ample room, while a body
 * nested 10,000 deep would overflow the stack of JSON.stringify, Ajv or the SQL layer.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Characters PostgreSQL cannot hold: text and jsonb refuse NUL; jsonb refuses an unpaired
 * UTF-16 surrogate (`\p{Cs}` under the u flag matches only unpaired ones). One pattern,
 * so that the common case (neither) is a single scan.
 */
const UNSTORABLE = /[\0\p{Cs}]/u;

/**
 * What every request of both servers must satisfy before its schema is even looked at,
 * checked in one walk over the path parameters, the query and the parsed body:
 *
 * - no NUL character (`\u0000`) in any string or object key. PostgreSQL's text and
 *   jsonb cannot store it. We refuse rather than strip: a stripped id or key would name
 *   something else than the client meant, and refusing is the same rule everywhere.
 * - no lone surrogate (`\ud800` unpaired): valid JSON, but not Unicode text; jsonb
 *   refuses it and a text column would silently turn it into U+FFFD.
 * - no nesting deeper than MAX_JSON_DEPTH.
 * - no number JSON cannot write back: `1e400` parses to Infinity, which JSON.stringify
 *   then turns into null and a timestamp or interval cannot hold.
 *
 * Each breach is a 422 naming the field (for depth, the top-level field that nests too
 * deep), and nothing is changed: the hook runs before any handler.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    inspect(request.params, "path");
    inspect(request.query, "query");
    inspect(request.body, "body");
  });
}

function inspect(value: unknown, part: "path" | "query" | "body"): void {
  const path: (string | number)[] = [part];
  const problem = findProblem(value, path, 0);
  if (problem) throw invalidField(problem.loc, problem.msg);
}

interface Problem {
  loc: (string | number)[];
  msg: string;
}

function stringProblem(text: string): string | undefined {
  if (!UNSTORABLE.test(text)) return undefined;
  return text.includes("\0") ? "must not contain NUL characters (\\u0000)" : "must not contain unpaired UTF-16 surrogates (such as \\ud800)";
}

/**
 * The first problem in `value`, depth first; `path` is where `value` sits (a stack,
 * copied only when something is found). Recursion stops at the depth limit, so the
 * walk itself cannot overflow the stack. Only plain JSON containers are entered: a
 * streamed upload body is left alone.
 */
function findProblem(value: unknown, path: (string | number)[], depth: number): Problem | undefined {
  if (typeof value === "string") {
    const msg = stringProblem(value);
    return msg ? { loc: [...path], msg } : undefined;
  }
  if (typeof value === "number" && !Number.isFinite(value)) return { loc: [...path], msg: "must be a finite number" };
  if (typeof value !== "object" || value === null) return undefined;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return undefined;
  if (depth >= MAX_JSON_DEPTH) {
    // Name the top-level field: the full path would be a hundred segments long.
    return { loc: path.slice(0, 2), msg: `nests deeper than ${MAX_JSON_DEPTH} levels` };
  }
  if (isArray) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const found = findProblem(value[i], path, depth + 1);
      path.pop();
      if (found) return found;
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    path.push(key);
    const keyMsg = stringProblem(key);
    const found = keyMsg ? { loc: [...path], msg: `key ${keyMsg}` } : findProblem(record[key], path, depth + 1);
    path.pop();
    if (found) return found;
  }
  return undefined;
}

/** A JSON object or a parsed query/params dictionary (their prototypes hold nothing). */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}
