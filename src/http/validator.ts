import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { isStorableDateTime } from "./date-time.ts";

/**
 * The request validator of both servers. It differs from Fastify's default in two ways
 * that matter for FastAPI wire compatibility:
 *
 * 1. Bodies are validated without type coercion: `{"name": 123}` or `{"build_on_push": "yes"}`
 *    is a 422, as with pydantic, instead of silently becoming "123" / true. Path, query and
 *    header values are strings on the wire, so they keep Ajv's coercion.
 * 2. `loc` names the part the way FastAPI does: `path`, `query`, `header`, `body`
 *    (Fastify calls them params, querystring, headers).
 *
 * It also pins `format: "uuid"` to the plain 8-4-4-4-12 form; ajv-formats accepts a
 * `urn:uuid:` prefix that PostgreSQL's uuid type would then reject with a 500. And
 * `format: "date-time"` is date-time.ts's rule: only dates the database can store.
 */
const FASTAPI_PART: Record<string, string> = { params: "path", querystring: "query", headers: "header", body: "body" };
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

type FormatsPlugin = (ajv: Ajv) => Ajv;
const require = createRequire(import.meta.url);

/** Ajv and its formats are loaded by the first request validated, not by every process at start (decision 0054). */
function makeAjv(coerce: boolean): Ajv {
  const { Ajv } = require("ajv") as typeof import("ajv");
  const formatsModule = require("ajv-formats") as { default?: FormatsPlugin } & FormatsPlugin;
  const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;
  const ajv = new Ajv({
    coerceTypes: coerce ? "array" : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  ajv.addFormat("uuid", UUID);
  ajv.addFormat("date-time", { type: "string", validate: isStorableDateTime });
  return ajv;
}

/**
 * Given to Fastify as its validator factory so that it does not load its own Ajv compiler
 * when constructed; installValidator replaces it before any route is added.
 */
export const noDefaultValidator: NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildValidator"] = () => () => {
  throw new Error("installValidator sets the validator compiler");
};

export function installValidator(app: FastifyInstance): void {
  let instances: { strict: Ajv; lenient: Ajv } | undefined;
  const ajvs = () => {
    if (!instances) {
      instances = { strict: makeAjv(false), lenient: makeAjv(true) };
      // Schemas registered with app.addSchema (referenced by $ref) must be known to our instances.
      for (const shared of Object.values(app.getSchemas())) {
        const id = (shared as { $id?: string }).$id;
        if (id && !instances.strict.getSchema(id)) instances.strict.addSchema(shared as object);
        if (id && !instances.lenient.getSchema(id)) instances.lenient.addSchema(shared as object);
      }
    }
    return instances;
  };

  app.setValidatorCompiler(({ schema, httpPart }) => {
    const id = (schema as { $id?: string }).$id;
    // Compiled at the first request that needs it: compiling every route's schemas at
    // start took over a second of each agent process's start, most for routes never called.
    let compiled: ValidateFunction | undefined;
    const part = FASTAPI_PART[httpPart ?? "body"] ?? httpPart ?? "body";
    return (data: unknown) => {
      compiled ??= (() => {
        const ajv = httpPart === "body" ? ajvs().strict : ajvs().lenient;
        return (id && ajv.getSchema(id)) || ajv.compile(schema as object);
      })();
      const validate = compiled;
      if (validate(data)) return true;
      const issues = collapseUnions((validate.errors ?? []) as ErrorObject[]);
      const error = Object.assign(new Error(issues.map((i) => `${i.instancePath || part} ${i.message}`).join("; ")), {
        validation: issues,
        validationContext: part,
      });
      return { error };
    };
  });
}

/**
 * A value failing `anyOf` (a nullable field, say) yields one error per branch plus one
 * for the union, all at the same place. Clients get one: "must be boolean or null".
 */
function collapseUnions(issues: ErrorObject[]): ErrorObject[] {
  const unionAt = new Set(issues.filter((i) => i.keyword === "anyOf" || i.keyword === "oneOf").map((i) => i.instancePath));
  if (unionAt.size === 0) return issues;
  const out: ErrorObject[] = [];
  for (const issue of issues) {
    if (!unionAt.has(issue.instancePath)) {
      out.push(issue);
      continue;
    }
    if (issue.keyword !== "anyOf" && issue.keyword !== "oneOf") continue;
    const branches = issues
      .filter((i) => i.instancePath === issue.instancePath && i !== issue && i.keyword !== "anyOf" && i.keyword !== "oneOf")
      .map((i) => i.message ?? "");
    const unique = [...new Set(branches)].filter(Boolean);
    const message = !unique.length
      ? issue.message
      : unique.every((m) => m.startsWith("must be "))
        ? `must be ${unique.map((m) => m.slice("must be ".length)).join(" or ")}`
        : unique.join("; or ");
    out.push({ ...issue, message });
  }
  return out;
}
