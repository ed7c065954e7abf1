import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Queryable } from "../../storage/database.ts";
import { FilterError } from "./filters.ts";
import { AuthRefusal, authenticate, authorize, type AuthContext, type HandlerCache } from "./handlers.ts";
import { setRequestFilters } from "./request-filters.ts";
import { ROUTE_GUARDS } from "./route-guards.ts";

/** Routes that answer without authentication, as on the vendor's server: health, info, the API description. */
const OPEN_PATHS = new Set(["/ok", "/info", "/openapi.json"]);

/**
 * Routes of no resource: any authenticated user may call them, as on the vendor's server, whose `on` handlers cover no ui action.
 * The MCP and A2A endpoints are among them: what they do goes through the REST routes,
 * in process, as the caller, whose `on` handlers then apply (own-api.ts).
 */
const AUTHENTICATED_ONLY = new Set([
  "POST /ui/:graph_id",
  "GET /metrics",
  ...["POST", "GET", "DELETE"].flatMap((method) => [`${method} /mcp`, `${method} /mcp/`]),
  "POST /a2a/:assistant_id",
  "GET /.well-known/agent-card.json",
]);

interface CustomAuthDeps {
  db: Queryable;
  resolveAssistant(idOrGraphId: string): string | undefined;
}

/**
 * `auth.path` of langgraph.json: every request but the open ones goes through the
 * project's `authenticate` handler (401 when it throws or returns no identity), then the
 * `on` handler of the route's resource and action (see route-guards.ts).
 *
 * The vendor's server takes any request carrying `x-auth-scheme: langsmith` as LangGraph
 * Studio's user and skips `authenticate` for it; LangSmith vouches for that header on its
 * cloud, but on a self-hosted server anyone can send it. This server never honours it.
 */
export function registerCustomAuth(app: FastifyInstance, cache: HandlerCache, deps: CustomAuthDeps): void {
  const contexts = new WeakMap<FastifyRequest, AuthContext>();
  if (!cache.authenticate) {
    // As on the vendor's server: without an identity no `on` handler can run.
    app.log.warn("auth.path: the Auth has no authenticate handler, so its `on` handlers never run and every request is let through");
  }

  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0]!;
    if (isOpenRequest(request.method, path)) return;
    try {
      const context = await authenticate(cache, toFetchRequest(request), { pathParams: request.params as Record<string, string> | undefined });
      if (context) contexts.set(request, context);
    } catch (error) {
      return refuse(reply, error, request);
    }
  });

  // After validation, so that guards see (and may change) the parsed body.
  app.addHook("preHandler", async (request, reply) => {
    const context = contexts.get(request);
    const route = request.routeOptions.url;
    if (!context || route === undefined) return;
    const method = request.method === "HEAD" ? "GET" : request.method;
    const guard = ROUTE_GUARDS[`${method} ${route}`];
    try {
      if (!guard) {
        if (isOpen(route) || AUTHENTICATED_ONLY.has(`${method} ${route}`)) return;
        // A route added later without a rule here must not be open to every user.
        throw new AuthRefusal(403, `Custom auth has no rule for ${method} ${route}`);
      }
      await guard({
        request,
        context,
        db: deps.db,
        authorize: (resource, action, value) => authorize(cache, context, { resource, action }, value),
        resolveAssistant: deps.resolveAssistant,
        setStoreFilters: (filters) => setRequestFilters(request, filters),
      });
    } catch (error) {
      if (error instanceof AuthRefusal || error instanceof FilterError) return refuse(reply, error, request);
      throw error;
    }
  });
}

/**
 * Whether a request answers without authentication: preflights, the open paths, and the
 * ui's files, as on the vendor's server (a page loads them with <script> and <link>
 * tags, which send no token).
 */
export function isOpenRequest(method: string, path: string): boolean {
  return method === "OPTIONS" || isOpen(path) || (method === "GET" && path.startsWith("/ui/"));
}

/** Whether a path answers without authentication (health, info, the API description). */
function isOpen(path: string): boolean {
  return OPEN_PATHS.has(path) || path === "/docs" || path.startsWith("/docs/");
}

/** The request as the SDK's handlers expect it: a WHATWG Request (headers and URL; the body is not read). */
function toFetchRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, String(value));
  }
  const host = request.headers.host ?? "localhost";
  return new Request(`http://${host}${request.url}`, { method: request.method, headers });
}

function refuse(reply: FastifyReply, error: unknown, request: FastifyRequest): FastifyReply {
  const refusal = error instanceof AuthRefusal ? error : new AuthRefusal(500, (error as Error).message);
  if (refusal.status >= 500) request.log.error({ err: error }, "custom auth handler failed");
  return reply.code(refusal.status).headers(refusal.headers).send({ detail: refusal.message });
}
