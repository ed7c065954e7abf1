import type { FastifyInstance, FastifyRequest } from "fastify";
import type { HeaderPatterns } from "../graphs/http-config.ts";

/** The routes that create runs: their bodies' `config.configurable` receives the headers. */
const RUN_ROUTES = new Set([
  "/threads/:thread_id/runs",
  "/threads/:thread_id/runs/stream",
  "/threads/:thread_id/runs/wait",
  "/runs",
  "/runs/stream",
  "/runs/wait",
  "/runs/batch",
]);

/** What the vendor's JS server copies when nothing is configured (its utils/run-auth). */
const VENDOR_DEFAULT_HEADERS: HeaderPatterns = { includes: ["x-*", "user-agent"], excludes: ["x-api-key", "x-tenant-id", "x-service-key"] };

/** Never copied unless named exactly in `includes`: they are credentials. */
const SECRET = new Set(["x-api-key", "authorization", "cookie"]);

/**
 * `http.configurable_headers`: the request headers a new run finds in
 * `config.configurable`, under their lower-case names, so that a graph reads (say)
 * `x-user-id` set by a proxy in front. Excludes are checked first; without `includes`,
 * every `x-*` header goes. A header overrides a key of the same name in the body: the
 * header is what a trusted proxy sets. Without the setting, the vendor's JS server's
 * rule: every `x-*` header but its credentials, and `user-agent`.
 */
export function registerConfigurableHeaders(app: FastifyInstance, patterns: HeaderPatterns = VENDOR_DEFAULT_HEADERS): void {
  const pick = headerPicker(patterns);
  app.addHook("preHandler", async (request: FastifyRequest) => {
    if (request.method !== "POST" || !RUN_ROUTES.has(request.routeOptions.url ?? "")) return;
    const picked = pick(request.headers);
    if (Object.keys(picked).length === 0) return;
    const bodies = Array.isArray(request.body) ? request.body : [request.body];
    for (const body of bodies) {
      if (!body || typeof body !== "object") continue;
      const run = body as { config?: { configurable?: Record<string, unknown> } | null };
      run.config = { ...(run.config ?? {}), configurable: { ...(run.config?.configurable ?? {}), ...picked } };
    }
  });
}

function headerPicker(patterns: HeaderPatterns): (headers: Record<string, string | string[] | undefined>) => Record<string, string> {
  const excludes = patterns.excludes.map(wildcard);
  const includes = (patterns.includes ?? ["x-*", "user-agent"]).map(wildcard);
  const named = new Set(patterns.includes ?? []);
  return (headers) => {
    const picked: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      if (SECRET.has(name) && !named.has(name)) continue;
      if (excludes.some((re) => re.test(name)) || !includes.some((re) => re.test(name))) continue;
      picked[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    return picked;
  };
}

/** `*` matches any characters; nothing else is special (the vendor allows no other pattern). */
function wildcard(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}
