import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiKeyIdentity, Authenticator } from "../controlplane/tenancy/authenticate.ts";
import type { RevisionGroup } from "../pipeline/runtime/revision-group.ts";
import { corsPolicy, type CorsConfig, type CorsPolicy } from "../http/cors.ts";
import { AGENT_EXPOSED_HEADERS } from "../http/expose-headers.ts";
import type { Database } from "../storage/database.ts";
import { forward } from "./proxy.ts";
import { customHosts, findRoutedDeployment, type RoutedDeployment } from "./repository.ts";

/**
 * Serves each deployment at its URL on the control plane's port: `/deployments/<id>/...`
 * (and at its own host name when source_config.custom_url names one), forwarding to the
 * processes of its active revision.
 *
 * A request needs `X-Api-Key` with a key that may use the deployment's workspace: 401
 * without one, 403 with an unknown one (as the vendor's deployments answer) or a key of
 * another workspace, 404 for a deployment that does not exist or is being deleted, 503
 * while nothing is deployed; each in FastAPI's `{"detail": ...}` and with the CORS
 * headers the deployment's agent would give. Browser preflights (OPTIONS with
 * Access-Control-Request-Method) carry no credentials and go through to the agent, or
 * are answered here as it would when no agent can answer them.
 *
 * Lookups are cached briefly (keys for 5 s, deployments for 1 s): a revoked key stops
 * working within 5 s.
 */
export interface RouterDeps {
  db: Database;
  authenticator: Authenticator;
  /** What serves a deployment now (the pipeline's runtime). */
  target(deploymentId: string): RevisionGroup | undefined;
  /** How long a request waits for a process that is starting before 503. */
  holdMs?: number;
  /**
   * Starts a sleeping deployment's processes: true when it sleeps (or is waking), and the
   * request is then held until they listen, up to `wakeHoldMs` (docs/decisions/0039).
   */
  wake?(deploymentId: string): boolean;
  /** How long a request waits for a sleeping deployment to wake before 503 (default 60 s). */
  wakeHoldMs?: number;
  /** Why a deployment's active revision cannot be served at all (its build is gone): answered at once. */
  unserved?(deploymentId: string): string | undefined;
}

const PATH = /^\/deployments\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(\/.*)?$/;
const KEY_TTL_MS = 5_000;
const DEPLOYMENT_TTL_MS = 1_000;
const HOSTS_TTL_MS = 5_000;

export interface DeploymentRouter {
  /** Whether this request is for a deployment (else the control plane's own routes get it). */
  handles(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Drops what is cached of these deployments (they are being deleted): their URL answers 404 at once. */
  forget(ids: readonly string[]): void;
}

/** A request's deployment, the path it asks of it, and the prefix it used. */
interface Route {
  id: string;
  path: string;
  prefix: string;
}

export function createDeploymentRouter(deps: RouterDeps): DeploymentRouter {
  const keys = new Map<string, { identity: ApiKeyIdentity | null; until: number }>();
  const deployments = new Map<string, { row: RoutedDeployment | undefined; until: number }>();
  let hosts: { map: Map<string, string>; until: number; loading?: Promise<void> } = { map: new Map(), until: 0 };
  let matched: { req: IncomingMessage; target: Route } | undefined;

  function route(req: IncomingMessage): Route | undefined {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const pathname = query === -1 ? url : url.slice(0, query);
    const match = PATH.exec(pathname);
    if (match) {
      const prefix = `/deployments/${match[1]}`;
      return { id: match[1].toLowerCase(), path: (match[2] ?? "/") + (query === -1 ? "" : url.slice(query)), prefix };
    }
    const host = hostOf(req);
    const id = host ? hosts.map.get(host) : undefined;
    return id ? { id, path: url, prefix: "" } : undefined;
  }

  function refreshHosts(): void {
    if (hosts.until > Date.now() || hosts.loading) return;
    hosts.loading = customHosts(deps.db)
      .then((rows) => {
        const map = new Map<string, string>();
        for (const row of rows) {
          const host = hostOfUrl(row.custom_url);
          if (host) map.set(host, row.id);
        }
        hosts = { map, until: Date.now() + HOSTS_TTL_MS };
      })
      .catch(() => {
        hosts = { ...hosts, until: Date.now() + HOSTS_TTL_MS, loading: undefined };
      });
  }

  async function identity(req: IncomingMessage, key: string): Promise<ApiKeyIdentity | null> {
    const digest = createHash("sha256").update(key).digest("hex");
    const cached = keys.get(digest);
    if (cached && cached.until > Date.now()) return cached.identity;
    const found = await deps.authenticator.apiKeyIdentity(req.headers);
    if (keys.size > 10_000) keys.clear();
    keys.set(digest, { identity: found, until: Date.now() + KEY_TTL_MS });
    return found;
  }

  async function deployment(id: string): Promise<RoutedDeployment | undefined> {
    const cached = deployments.get(id);
    if (cached && cached.until > Date.now()) return cached.row;
    const row = await findRoutedDeployment(deps.db, id);
    if (deployments.size > 10_000) deployments.clear();
    deployments.set(id, { row, until: Date.now() + DEPLOYMENT_TTL_MS });
    return row;
  }

  async function serve(req: IncomingMessage, res: ServerResponse, target: Route): Promise<void> {
    const found = await deployment(target.id);
    const known = found && found.status !== "AWAITING_DELETE" ? found : undefined;
    // The router's own answers carry the CORS headers the deployment's agent would give
    // (its http.cors, else the default): a browser then reads the refusal instead of a CORS error.
    const current = known ? deps.target(target.id) : undefined;
    const cors = corsOf(current);
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    // Preflights carry no credentials. What no agent can answer now is answered here, as it would.
    if (preflight && !current?.processes.some((candidate) => candidate.endpoint)) return answerPreflight(req, res, cors);
    const refuse = (status: number, detail: string, headers: Record<string, string> = {}) =>
      reply(res, status, detail, { ...headers, ...corsHeaders(req, cors) });
    if (!known) return refuse(404, `Deployment ID ${target.id} not found.`);
    if (!preflight) {
      const key = single(req.headers["x-api-key"]);
      if (!key) return refuse(401, "Missing X-Api-Key header");
      const caller = await identity(req, key);
      // A wrong key is refused as the vendor's deployments refuse it: 403.
      if (!caller) return refuse(403, "Invalid API key");
      const allowed = caller.workspaceId === null ? caller.organizationId === known.organization_id : caller.workspaceId === known.workspace_id;
      if (!allowed) return refuse(403, `this API key has no access to the workspace of deployment ${target.id}`);
    }
    const unavailable = (detail: string) => refuse(503, detail, { "retry-after": "1" });
    const group = await serving(target.id, known);
    if (!group) return;
    const process_ = group.pick();
    const endpoint = process_?.endpoint;
    if (!endpoint) return unavailable(`Deployment ${target.id} is starting: try again in a moment.`);
    group.begin();
    forward(req, res, { endpoint, path: target.path, apiKey: group.internalKey, prefix: target.prefix, errorHeaders: corsHeaders(req, cors) }, () =>
      group.end(),
    );

    async function serving(id: string, row: RoutedDeployment): Promise<RevisionGroup | undefined> {
      // A process that is starting (after a restart, or restarting after a crash) is waited for briefly.
      let deadline = Date.now() + (deps.holdMs ?? 10_000);
      let waking = false;
      for (;;) {
        const group = deps.target(id);
        if (group?.pick()) return group;
        // A sleeping deployment is woken by the request, which waits for it (a start takes seconds).
        if (!group && !waking && deps.wake?.(id)) {
          waking = true;
          deadline = Date.now() + (deps.wakeHoldMs ?? 60_000);
        }
        const cannot = group ? undefined : deps.unserved?.(id);
        if (cannot) {
          unavailable(cannot);
          return undefined;
        }
        if (!group && !waking && !row.active_revision_id) {
          const latest = row.latest_revision_id ? ` Its latest revision ${row.latest_revision_id} is ${row.latest_status}.` : "";
          unavailable(`Deployment ${id} has no deployed revision yet.${latest}`);
          return undefined;
        }
        if (Date.now() >= deadline || res.destroyed) {
          unavailable(`Deployment ${id} is starting: try again in a moment.`);
          return undefined;
        }
        // Looked at more often while it wakes: the request goes out soon after a process listens.
        await new Promise((resolve) => setTimeout(resolve, waking ? 20 : 100));
      }
    }
  }

  return {
    handles(req) {
      refreshHosts();
      const target = route(req);
      // handle() follows at once for the same request: the route is computed once.
      matched = target && { req, target };
      return target !== undefined;
    },
    forget(ids) {
      for (const id of ids) deployments.delete(id.toLowerCase());
    },
    handle(req, res) {
      const target = matched?.req === req ? matched.target : route(req);
      matched = undefined;
      if (!target) return reply(res, 404, "Not Found", corsHeaders(req, corsOf(undefined)));
      serve(req, res, target).catch((error: Error) => {
        if (!res.headersSent) reply(res, 500, `The router failed: ${error.message}`, corsHeaders(req, corsOf(undefined)));
        else res.destroy();
      });
    },
  };
}

function reply(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ detail }));
}

/** The CORS policy of what a group serves (its http.cors), or the default one. */
function corsOf(group: RevisionGroup | undefined): CorsPolicy {
  const config = group?.cors;
  if (!config) return DEFAULT_CORS;
  let policy = policies.get(config);
  if (!policy) policies.set(config, (policy = corsPolicy(config, AGENT_EXPOSED_HEADERS as string[])));
  return policy;
}

const DEFAULT_CORS = corsPolicy({}, AGENT_EXPOSED_HEADERS as string[]);
const policies = new WeakMap<CorsConfig, CorsPolicy>();

function corsHeaders(req: IncomingMessage, cors: CorsPolicy): Record<string, string> {
  const origin = req.headers.origin;
  return origin ? cors.response(origin) : {};
}

/** A preflight answered as the agent's CORS rules would: 204 when the origin may call. */
function answerPreflight(req: IncomingMessage, res: ServerResponse, cors: CorsPolicy): void {
  const requested = req.headers["access-control-request-headers"];
  const headers = cors.preflight(req.headers.origin ?? "", typeof requested === "string" ? requested : undefined);
  res.writeHead(headers["access-control-allow-origin"] ? 204 : 403, headers);
  res.end();
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function hostOf(req: IncomingMessage): string | undefined {
  return req.headers.host?.toLowerCase().replace(/:\d+$/, "");
}

function hostOfUrl(url: string): string | undefined {
  try {
    return new URL(url.includes("://") ? url : `http://${url}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
