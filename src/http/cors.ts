import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { withExposed } from "./expose-headers.ts";

/** langgraph.json's `http.cors`, in its own field names. */
export interface CorsConfig {
  allow_origins?: string[];
  allow_methods?: string[];
  allow_headers?: string[];
  allow_credentials?: boolean;
  expose_headers?: string[];
  max_age?: number;
}

const ALL_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

/**
 * Cross-origin access for browser clients (LangGraph Studio, agent-chat-ui). Without a
 * configuration every origin may call the server, as on the vendor's dev server; with
 * one, only its origins. Preflights are answered here with 204. The headers go on the
 * Fastify reply (streamed, hijacked replies copy them into their head).
 *
 * Register it after the rate limiter (the table counts OPTIONS requests) and before
 * authentication (a preflight carries no credentials).
 */
export function registerCors(app: FastifyInstance, config: CorsConfig = {}, alwaysExposed: string[] = []): void {
  const policy = corsPolicy(config, alwaysExposed);
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const origin = request.headers.origin;
    if (!origin) return done();
    const preflight = request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined;
    const requested = request.headers["access-control-request-headers"];
    const headers = preflight ? policy.preflight(origin, typeof requested === "string" ? requested : undefined) : policy.response(origin);
    for (const [name, value] of Object.entries(headers)) {
      // Added to, not replaced: the rate limiter, ahead of this hook, may have listed its headers.
      reply.header(name, name === EXPOSE ? withExposed(reply.getHeader(EXPOSE), value.split(", ")) : value);
    }
    if (!preflight || !headers["access-control-allow-origin"]) return done();
    reply.code(204).send();
  });
}

const EXPOSE = "access-control-expose-headers";

/** The CORS headers a server with this `http.cors` gives, for answers written outside Fastify's hook. */
export interface CorsPolicy {
  /** For an actual (not preflight) response to `origin`. */
  response(origin: string): Record<string, string>;
  /** For a preflight from `origin` (with its Access-Control-Request-Headers); no allow-origin: refused. */
  preflight(origin: string, requestedHeaders: string | undefined): Record<string, string>;
}

export function corsPolicy(config: CorsConfig = {}, alwaysExposed: string[] = []): CorsPolicy {
  const origins = config.allow_origins ?? ["*"];
  const anyOrigin = origins.includes("*");
  const credentials = config.allow_credentials === true;
  const exposed = [...new Set([...alwaysExposed, ...(config.expose_headers ?? [])])];
  const methods = config.allow_methods?.length ? config.allow_methods.join(", ") : ALL_METHODS;
  const allowedHeaders = config.allow_headers?.length && !config.allow_headers.includes("*") ? config.allow_headers.join(", ") : undefined;
  const allowOrigin = (origin: string): string | undefined => {
    if (anyOrigin) return credentials ? origin : "*";
    return origins.includes(origin) ? origin : undefined;
  };
  const response = (origin: string): Record<string, string> => {
    const headers: Record<string, string> = {};
    if (!anyOrigin || credentials) headers.vary = "Origin";
    const allowed = allowOrigin(origin);
    if (!allowed) return headers;
    headers["access-control-allow-origin"] = allowed;
    if (credentials) headers["access-control-allow-credentials"] = "true";
    if (exposed.length) headers[EXPOSE] = exposed.join(", ");
    return headers;
  };
  return {
    response,
    preflight(origin, requestedHeaders) {
      const headers = response(origin);
      if (!headers["access-control-allow-origin"]) return headers;
      headers["access-control-allow-methods"] = methods;
      const allowHeaders = allowedHeaders ?? requestedHeaders;
      if (allowHeaders) headers["access-control-allow-headers"] = allowHeaders;
      if (config.max_age !== undefined) headers["access-control-max-age"] = String(config.max_age);
      return headers;
    },
  };
}

/** Checks `http.cors` of a langgraph.json; returns the problem, or undefined. */
export function corsConfigProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "must be an object";
  const known = new Set(["allow_origins", "allow_methods", "allow_headers", "allow_credentials", "expose_headers", "max_age"]);
  for (const [key, field] of Object.entries(value)) {
    if (!known.has(key)) return `${key}: unknown field (known: ${[...known].join(", ")})`;
    if (key === "allow_credentials" && typeof field !== "boolean") return `${key}: must be true or false`;
    else if (key === "max_age" && !(Number.isInteger(field) && (field as number) >= 0)) return `${key}: must be a whole number of seconds`;
    else if (key !== "allow_credentials" && key !== "max_age" && !(Array.isArray(field) && field.every((item) => typeof item === "string"))) {
      return `${key}: must be a list of strings`;
    }
  }
  return undefined;
}
