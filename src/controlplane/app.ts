import { createServer } from "node:http";
import type { FastifyInstance, FastifyRequest, FastifyServerFactory } from "fastify";
import type { DeploymentRouter } from "../router/deployment-router.ts";
import type { PathAlias } from "../http/canonical-url.ts";
import { createHttpServer } from "../http/server.ts";
import { registerRateLimit, type RateLimitOptions } from "../ratelimit/plugin.ts";
import type { ControlPlaneDeps, RegisterRoutes } from "./context.ts";
import { apiHostDocument, installOpenApiExtras } from "./openapi.ts";
import { routeModules } from "./routes.ts";
import { buildServices, type ControlPlaneServices } from "./services.ts";
import type { Authenticator } from "./tenancy/authenticate.ts";
import { SLIPWAY_VERSION } from "../config/version.ts";
import type { MetricsService } from "./metrics/service.ts";
import { applyFastifyTimeouts } from "../http/server-timeouts.ts";

/**
 * The self-hosted mirror: every path also answers under /api-host. It is an alias taken
 * off before routing (src/http/canonical-url.ts), not a second mount, so that a route
 * and its mirror are one route for every hook, the rate limiter's counters included.
 * Its OpenAPI document is its own (paths resolve under the prefix).
 */
export const API_HOST: PathAlias = { prefix: "/api-host", own: ["/api-host/openapi.json"] };

interface ControlPlaneAppOptions {
  deps: ControlPlaneDeps;
  authenticator: Authenticator;
  /**
   * Rate limiting (src/ratelimit/; build it with `rateLimitOptionsFromFlags`). Its
   * `resolveIdentity` should be `(request) => resolveRateLimitIdentity(authenticator, request)`.
   * Without it the app has no limits (tests).
   */
  rateLimit?: RateLimitOptions;
  /** Defaults to `routeModules` from routes.ts; tests may mount fewer. */
  modules?: RegisterRoutes[];
  /** The services the routes use, when the caller built them (to share them with the pipeline); else built here. */
  services?: ControlPlaneServices;
  logLevel?: string;
  /** Largest request body in bytes (413 beyond). Control-plane bodies are small: 1 MiB. */
  bodyLimit?: number;
  /**
   * Serves deployments at their URL (`/deployments/<id>/...`) on this port, ahead of
   * Fastify: their requests stream through untouched and skip the control plane's hooks
   * (no rate-limit table applies to a deployment, as on the vendor's hosts).
   */
  router?: DeploymentRouter;
}

/** A node server that hands deployment requests to the router and the rest to Fastify. */
function routedServer(router: DeploymentRouter, metrics: MetricsService): FastifyServerFactory {
  return (handler, options) =>
    applyFastifyTimeouts(
      createServer((req, res) => {
        if (!router.handles(req)) return handler(req, res);
        const started = performance.now();
        res.once("finish", () => metrics.recordRouted(req.url, req.method, res.statusCode, (performance.now() - started) / 1000));
        router.handle(req, res);
      }),
      options,
    );
}

/**
 * Identity for rate limiting that never throws: `{apiKey}` (the key's id, not the
 * secret) only for a live API key, `{userId}` for a valid bearer token, `{}` for
 * anything else (the limiter then counts the IP). Shares the auth hook's lookups.
 */
export function resolveRateLimitIdentity(authenticator: Authenticator, request: FastifyRequest): Promise<{ apiKey?: string; userId?: string }> {
  return authenticator.callerIdentity(request.headers);
}

/** The agent server's API, which clients (an SDK given the control plane's address) sometimes send here. */
const AGENT_API = /^(\/api-host)?\/(assistants|threads|runs|store|info)(\/|$)/;

function agentApiHint(_method: string, path: string): string | undefined {
  if (!AGENT_API.test(path)) return undefined;
  return "This is the control plane: a deployment's agent API (assistants, threads, runs, store) is at its URL, /deployments/<deployment id>, as `url` in GET /v2/deployments says";
}

/**
 * The control-plane HTTP app: FastAPI-shaped errors, strict body validation, every
 * route of `routeModules` at `/...` and `/api-host/...` behind the auth hook, the
 * OpenAPI document at `/openapi.json` and `/api-host/openapi.json`, docs at `/docs`,
 * health at `GET /ok`. The caller listens (or uses `app.inject`) and closes it.
 */
export async function buildControlPlaneApp(options: ControlPlaneAppOptions): Promise<FastifyInstance> {
  const services = options.services ?? buildServices(options.deps);
  const app = await createHttpServer({
    title: "Slipway Control Plane API",
    version: SLIPWAY_VERSION,
    validationStyle: "fastapi",
    pathAliases: [API_HOST],
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    logLevel: options.logLevel,
    serverFactory: options.router ? routedServer(options.router, services.metrics) : undefined,
    notFoundHint: agentApiHint,
  });
  installOpenApiExtras(
    app,
    "Slipway's control plane, wire-compatible with the LangSmith Deployment Control Plane API. " +
      "Authenticate with `X-Api-Key` (plus `X-Tenant-Id` for organization keys) or `Authorization: Bearer <JWT>`. " +
      "Every path also answers under `/api-host`.",
  );

  // ─── Rate limiting (src/ratelimit/) ─────────────────────────────────────────────────
  // Before authentication: a request refused with 401 still counts (guessing keys is not
  // free), and floods of bad keys are throttled by IP before they reach the database.
  if (options.rateLimit) registerRateLimit(app, options.rateLimit);
  // ────────────────────────────────────────────────────────────────────────────────────

  app.get("/ok", { schema: { hide: true } }, async () => ({ ok: true }));
  app.get("/api-host/openapi.json", { schema: { hide: true } }, async () => apiHostDocument(app));

  const modules = options.modules ?? routeModules;
  await app.register(async (scope) => {
    scope.addHook("onRequest", async (request) => {
      const { public: open, anyWorkspace } = request.routeOptions.config;
      if (open) return;
      if (anyWorkspace) {
        request.caller = await options.authenticator.caller(request.headers);
        return;
      }
      request.tenant = await options.authenticator.authenticate(request.headers);
    });
    // Counted per workspace for its /metrics; requests refused before a tenant is known are not.
    scope.addHook("onResponse", async (request, reply) => {
      services.metrics.recordRequest(request.tenant?.workspaceId, request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    });
    for (const register of modules) await register(scope, services);
  });
  return app;
}
