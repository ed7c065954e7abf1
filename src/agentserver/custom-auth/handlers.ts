import { importProjectExport } from "../graphs/project-module.ts";
import type { AuthSection, ModuleRef } from "../graphs/config-sections.ts";
import { FilterError, type AuthFilters } from "./filters.ts";

/**
 * The project's `Auth` (from `@langchain/langgraph-sdk/auth`), as the SDK builds it:
 * `authenticate(cb)` and `on(event, cb)` fill its `~handlerCache`. The project may bring
 * its own copy of the SDK, so it is recognised by that field, never by class.
 */
export interface HandlerCache {
  /** `details` carries what a WHATWG Request cannot: the route's path parameters (a Python handler may ask for them). */
  authenticate?: (request: Request, details?: { pathParams?: Record<string, string> }) => unknown;
  callbacks?: Record<string, (parameter: Record<string, unknown>) => unknown>;
}

/** Who a request is, once `authenticate` accepted it (the vendor's AuthContext). */
export interface AuthContext {
  user: { identity: string; permissions: string[]; display_name: string; is_authenticated: boolean; [key: string]: unknown };
  scopes: string[];
}

/** An HTTP answer an auth handler asked for (the SDK's HTTPException), or our own refusal. */
export class AuthRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The project's `auth.path`: a JS module's Auth, or the Python one the graphs' worker loaded. */
export async function loadProjectAuth(section: AuthSection, graphs: { pythonAuth?: HandlerCache }): Promise<HandlerCache> {
  if (section.language === "python") {
    if (!graphs.pythonAuth) throw new Error("auth.path: the Python worker did not load the Auth");
    return graphs.pythonAuth;
  }
  return loadAuth(section.module);
}

export async function loadAuth(ref: ModuleRef): Promise<HandlerCache> {
  const value = (await importProjectExport(ref)) as Record<string, unknown>;
  const cache = value?.["~handlerCache"] as HandlerCache | undefined;
  if (!cache || typeof cache !== "object") {
    throw new Error(
      `auth.path: the export "${ref.exportName}" of ${ref.file} is not an Auth of @langchain/langgraph-sdk/auth (new Auth().authenticate(...).on(...))`,
    );
  }
  return cache;
}

/**
 * Runs the `authenticate` handler and normalises what it returns: a string is the
 * identity; an object needs `identity`, and its `permissions` become the scopes.
 * No handler: no context, and then (as on the vendor's server) no `on` handler runs.
 */
export async function authenticate(cache: HandlerCache, request: Request, details?: { pathParams?: Record<string, string> }): Promise<AuthContext | undefined> {
  if (!cache.authenticate) return undefined;
  let result: unknown;
  try {
    result = await cache.authenticate(request, details);
  } catch (error) {
    throw asRefusal(error, 401);
  }
  if (typeof result === "string" && result !== "") {
    return { scopes: [], user: { identity: result, display_name: result, permissions: [], is_authenticated: true } };
  }
  if (result && typeof result === "object" && typeof (result as { identity?: unknown }).identity === "string") {
    const user = result as Record<string, unknown> & { identity: string };
    const scopes = Array.isArray(user.permissions) ? (user.permissions as unknown[]).filter((p): p is string => typeof p === "string") : [];
    return {
      scopes,
      user: {
        ...user,
        permissions: scopes,
        is_authenticated: typeof user.is_authenticated === "boolean" ? user.is_authenticated : true,
        display_name: typeof user.display_name === "string" ? user.display_name : user.identity,
      },
    };
  }
  // A handler that returns no identity has accepted nobody: fail closed.
  throw new AuthRefusal(401, "Authentication handler returned no identity (return a string or an object with `identity`)");
}

/**
 * Calls the most specific `on` handler of `resource:action` (then `resource`, then
 * `*:action`, then `*`) with the request's user and the value, which the handler may
 * change. Its answer: nothing or `true` allows without filters, `false` refuses (403),
 * an object is filters the call's resources must match.
 */
export async function authorize(
  cache: HandlerCache,
  context: AuthContext | undefined,
  event: { resource: string; action: string },
  value: Record<string, unknown>,
): Promise<AuthFilters | undefined> {
  const callbacks = cache.callbacks ?? {};
  const { resource, action } = event;
  const key = [`${resource}:${action}`, resource, `*:${action}`, "*"].find((k) => typeof callbacks[k] === "function");
  if (!key || !context) return undefined;
  let result: unknown;
  try {
    result = await callbacks[key]!({
      event: `${resource}:${action}`,
      resource,
      action,
      value,
      permissions: context.scopes,
      user: context.user,
    });
  } catch (error) {
    throw asRefusal(error, 403);
  }
  if (result === undefined || result === null || result === true) return undefined;
  if (result === false) throw new AuthRefusal(403, "Forbidden");
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new AuthRefusal(
      500,
      `Auth handler for ${resource}:${action} returned ${Array.isArray(result) ? "a list" : typeof result}; expected filters (an object), a boolean or nothing`,
    );
  }
  return result as AuthFilters;
}

/**
 * An HTTPException of the SDK (any copy: it has `status` and `headers`) keeps its status;
 * any other error a handler throws refuses the request with `fallback`, never letting it
 * through.
 */
function asRefusal(error: unknown, fallback: number): AuthRefusal {
  if (error instanceof AuthRefusal) return error;
  if (error instanceof FilterError) return new AuthRefusal(500, error.message);
  const candidate = error as { status?: unknown; headers?: unknown; message?: unknown } | null;
  if (candidate && typeof candidate === "object" && typeof candidate.status === "number" && "headers" in candidate) {
    const status = candidate.status >= 400 && candidate.status <= 599 ? candidate.status : 500;
    const headers = candidate.headers && typeof candidate.headers === "object" ? toHeaderRecord(candidate.headers) : {};
    return new AuthRefusal(status, typeof candidate.message === "string" && candidate.message ? candidate.message : "Unauthorized", headers);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new AuthRefusal(fallback, message || (fallback === 401 ? "Unauthorized" : "Forbidden"));
}

/** HeadersInit in any of its forms (Headers, a record, a list of pairs); a malformed one adds nothing. */
function toHeaderRecord(headers: object): Record<string, string> {
  try {
    return Object.fromEntries(new Headers(headers as HeadersInit).entries());
  } catch {
    return {};
  }
}
