import type { FastifyReply, FastifyRequest } from "fastify";
import { notFound } from "../../http/errors.ts";
import type { RegisterRoutes } from "../context.ts";
import { loadAssets, type Asset } from "./assets.ts";
import { CONSOLE_HEADERS } from "./security-headers.ts";

/**
 * The web console: its page at `/` (so at `/api-host/` too, the alias being taken off before
 * routing) and its files under `/console/`, a prefix no vendor path uses. Public: the page
 * holds no data; it asks for an API key and sends it with each API call.
 */
export const registerConsoleRoutes: RegisterRoutes = (app) => {
  const assets = loadAssets();
  // Public, and outside the rate-limit table: files, not API calls (see ratelimit/plugin.ts).
  const config = { public: true, rateLimitExempt: true };
  const schema = { hide: true };

  app.get("/", { config, schema }, async (request, reply) => send(request, reply, assets.get("index.html")!));
  app.get("/console/*", { config, schema }, async (request, reply) => {
    const name = (request.params as { "*": string })["*"];
    const asset = assets.get(name);
    if (!asset || name === "index.html") throw notFound(`Not Found: GET /console/${name}`);
    return send(request, reply, asset);
  });
};

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  reply.headers({ ...CONSOLE_HEADERS, etag: asset.etag, vary: "accept-encoding", "content-type": asset.type });
  if (request.headers["if-none-match"] === asset.etag) return reply.status(304).send();
  if (/\bgzip\b/.test(request.headers["accept-encoding"] ?? "")) return reply.header("content-encoding", "gzip").send(asset.gzip);
  return reply.send(asset.body);
}
