import { timingSafeEqual, createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { SlipwayError } from "../http/errors.ts";

/** Routes that answer without a key: health, server info and the API description. */
const OPEN_PATHS = new Set(["/ok", "/info", "/openapi.json"]);

/**
 * With an API key configured, every other route needs header `X-Api-Key` carrying it:
 * 401 without the header, 403 with a wrong key. Keys are compared by hash in constant
 * time.
 */
export function requireApiKey(app: FastifyInstance, apiKey: string | undefined): void {
  if (!apiKey) return;
  const expected = digest(apiKey);
  app.addHook("onRequest", async (request) => {
    const path = request.url.split("?")[0];
    if (request.method === "OPTIONS" || OPEN_PATHS.has(path) || path === "/docs" || path.startsWith("/docs/")) return;
    const given = request.headers["x-api-key"];
    if (given === undefined || given === "") throw new SlipwayError("unauthorized", "Missing X-Api-Key header");
    const value = Array.isArray(given) ? given[0] : given;
    if (!timingSafeEqual(digest(value), expected)) throw new SlipwayError("forbidden", "Invalid API key");
  });
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
