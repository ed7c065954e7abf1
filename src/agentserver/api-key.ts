import { timingSafeEqual, createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { SlipwayError } from "../http/errors.ts";

/** Routes that answer without a key: health, server info and the API description. */
const OPEN_PATHS = new Set(["/ok", "/info", "/openapi.json"]);

/**
 * With an API key configured, every other route needs header `X-Api-Key` carrying it:
 * 401 without the header, 403 with a wrong key. Keys are compared by hash in constant
 * time.
 */
export function requireApiKey(app: FastifyInstance, apiKey: string | undefined): void {
  const refusal = apiKeyRefusal(apiKey);
  if (!refusal) return;
  app.addHook("onRequest", async (request) => {
    const problem = refusal(request.method, request.url.split("?")[0], request.headers["x-api-key"]);
    if (problem) throw problem;
  });
}

/**
 * The key check by itself, for requests answered outside Fastify's hooks (routes of the
 * project's `http.app`): the error to answer with, or undefined to let the request in.
 * Undefined as a whole when no key is configured.
 */
export function apiKeyRefusal(
  apiKey: string | undefined,
): ((method: string, path: string, given: string | string[] | undefined) => SlipwayError | undefined) | undefined {
  if (!apiKey) return undefined;
  const expected = digest(apiKey);
  return (method, path, given) => {
    if (method === "OPTIONS" || OPEN_PATHS.has(path) || path === "/docs" || path.startsWith("/docs/")) return undefined;
    if (given === undefined || given === "") return new SlipwayError("unauthorized", "Missing X-Api-Key header");
    const value = Array.isArray(given) ? given[0] : given;
    return timingSafeEqual(digest(value), expected) ? undefined : new SlipwayError("forbidden", "Invalid API key");
  };
}

/**
 * The rate limiter's view of a caller: the configured key, when the request carries
 * it, counts as one API-key identity; anything else (no key, a wrong key, or a server
 * without a key) is anonymous and counted by client IP.
 */
export function apiKeyIdentity(apiKey: string | undefined): (request: FastifyRequest) => { apiKey?: string } {
  if (!apiKey) return () => ({});
  const expected = digest(apiKey);
  const id = `agent-key:${expected.toString("hex").slice(0, 16)}`;
  return (request) => {
    const given = request.headers["x-api-key"];
    const value = Array.isArray(given) ? given[0] : given;
    return value && timingSafeEqual(digest(value), expected) ? { apiKey: id } : {};
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
