import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiKeyIdentity, Authenticator } from "../controlplane/tenancy/authenticate.ts";
import type { RevisionGroup } from "../pipeline/runtime/revision-group.ts";
import type { Database } from "../storage/database.ts";
import { forward } from "./proxy.ts";
import { customHosts, findRoutedDeployment, type RoutedDeployment } from "./repository.ts";

/**
 * Serves each deployment at its URL on the control plane's port: `/deployments/<id>/...`
 * (and at its own host name when source_config.custom_url names one), forwarding to the
 * processes of its active revision.
 *
 * A request needs `X-Api-Key` with a key that may use the deployment's workspace: 401
 * without one or with an unknown one, 403 for a key of another workspace, 404 for a
 * deployment that does not exist or is being deleted, 503 while nothing is deployed.
 * Browser preflights (OPTIONS with Access-Control-Request-Method) carry no credentials
 * and go through, as the agent server's CORS rules answer them.
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
    if (!found || found.status === "AWAITING_DELETE") return reply(res, 404, `Deployment ID ${target.id} not found.`);
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (!preflight) {
      const key = single(req.headers["x-api-key"]);
      if (!key) return reply(res, 401, "missing API key: send it in the X-Api-Key header");
      const caller = await identity(req, key);
      if (!caller) return reply(res, 401, "invalid API key");
      const allowed = caller.workspaceId === null ? caller.organizationId === found.organization_id : caller.workspaceId === found.workspace_id;
      if (!allowed) return reply(res, 403, `this API key has no access to the workspace of deployment ${target.id}`);
    }
    const group = await serving(target.id, found);
    if (!group) return;
    const process_ = group.pick();
    const endpoint = process_?.endpoint;
    if (!endpoint) return unavailable(res, `Deployment ${target.id} is starting: try again in a moment.`);
    group.begin();
    forward(req, res, { endpoint, path: target.path, apiKey: group.internalKey, prefix: target.prefix }, () => group.end());

    async function serving(id: string, row: RoutedDeployment): Promise<RevisionGroup | undefined> {
      // A process that is starting (after a restart, or restarting after a crash) is waited for briefly.
      const deadline = Date.now() + (deps.holdMs ?? 10_000);
      for (;;) {
        const group = deps.target(id);
        if (group?.pick()) return group;
        if (!group && !row.active_revision_id) {
          const latest = row.latest_revision_id ? ` Its latest revision ${row.latest_revision_id} is ${row.latest_status}.` : "";
          unavailable(res, `Deployment ${id} has no deployed revision yet.${latest}`);
          return undefined;
        }
        if (Date.now() >= deadline || res.destroyed) {
          unavailable(res, `Deployment ${id} is starting: try again in a moment.`);
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
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
      if (!target) return reply(res, 404, "Not Found");
      serve(req, res, target).catch((error: Error) => {
        if (!res.headersSent) reply(res, 500, `The router failed: ${error.message}`);
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

function unavailable(res: ServerResponse, detail: string): void {
  reply(res, 503, detail, { "retry-after": "1" });
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
