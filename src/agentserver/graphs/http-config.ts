import { corsConfigProblem, type CorsConfig } from "../../http/cors.ts";
import { moduleRef, SectionError, type ModuleRef } from "./config-sections.ts";

/** Route groups `http.disable_<group>` may turn off. */
const DISABLEABLE = ["assistants", "threads", "runs", "store", "ui", "mcp", "a2a"] as const;
type RouteGroup = (typeof DISABLEABLE)[number];

/** `http.configurable_headers`: which request headers a run finds in `config.configurable`. */
export interface HeaderPatterns {
  /** Patterns with `*` wildcards; unset: the vendor's default (every `x-*` header and `user-agent`). */
  includes?: string[];
  excludes: string[];
}

/** `http.app`: a JS module's export, or a Python module's ASGI app (Starlette, FastAPI), which the Python worker serves. */
export interface HttpAppRef extends ModuleRef {
  language: "js" | "python";
}

export interface HttpSection {
  cors?: CorsConfig;
  /** Route groups turned off with `http.disable_<group>: true`. */
  disabled: Set<RouteGroup>;
  /** `http.app`: a Hono app, any fetch handler, or a Python ASGI app, served beside the built-in routes. */
  app?: HttpAppRef;
  configurableHeaders?: HeaderPatterns;
  /** `http.mount_prefix`: every route is served under it ("/api"), without a trailing slash. */
  mountPrefix?: string;
  /** `http.disable_webhooks`: runs and crons call no webhook when they end (their `webhook` is still accepted). */
  webhooksOff?: boolean;
}

const fail = (key: string, why: string): never => {
  throw new SectionError(`${key}: ${why}`);
};

/**
 * Reads `http`, refusing settings that would change the server's behaviour but are not
 * built yet, naming the key: a setting silently left out would leave a server behaving
 * otherwise than its author meant.
 */
export function readHttp(raw: unknown, root: string): HttpSection {
  const disabled = new Set<RouteGroup>();
  if (raw === undefined || raw === null) return { disabled };
  if (typeof raw !== "object" || Array.isArray(raw)) fail("http", "must be an object");
  const section: HttpSection = { disabled };
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (key === "cors") {
      const problem = corsConfigProblem(value);
      if (problem) fail("http.cors", problem);
      section.cors = value as CorsConfig;
      continue;
    }
    if (key === "app") {
      if (value !== undefined && value !== null) section.app = httpApp(value, root);
      continue;
    }
    if (key === "configurable_headers") {
      section.configurableHeaders = headerPatterns(value);
      continue;
    }
    if (key === "mount_prefix") {
      section.mountPrefix = mountPrefix(value);
      continue;
    }
    const group = key.startsWith("disable_") ? key.slice("disable_".length) : undefined;
    if (group !== undefined) {
      if (typeof value !== "boolean") fail(`http.${key}`, "must be true or false");
      if (!value) continue;
      if (group === "webhooks") {
        section.webhooksOff = true;
        continue;
      }
      if ((DISABLEABLE as readonly string[]).includes(group)) {
        disabled.add(group as RouteGroup);
        continue;
      }
    }
    if (value === undefined || value === null || value === false) continue;
    fail(`http.${key}`, "not supported by this server yet");
  }
  return section;
}

/** A `.py` module names its app's attribute, as the vendor's `./src/app.py:app` does: Python has no default export. */
function httpApp(value: unknown, root: string): HttpAppRef {
  const ref = moduleRef(value, "http.app", root);
  const language = ref.file.endsWith(".py") ? "python" : "js";
  if (language === "python" && ref.exportName === "default") fail("http.app", 'must name the app of the Python module: "./src/app.py:app"');
  return { ...ref, language };
}

/** `{includes, excludes}` as the vendor's schema names them; `include`/`exclude` as its guide once did. */
function headerPatterns(value: unknown): HeaderPatterns | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) fail("http.configurable_headers", "must be an object");
  const fields = value as Record<string, unknown>;
  const lists: Record<"includes" | "excludes", string[] | undefined> = { includes: undefined, excludes: undefined };
  for (const [name, list] of Object.entries(fields)) {
    const target = name === "includes" || name === "include" ? "includes" : name === "excludes" || name === "exclude" ? "excludes" : undefined;
    if (!target) fail(`http.configurable_headers.${name}`, "unknown setting (known: includes, excludes)");
    if (list === null || list === undefined) continue;
    if (!Array.isArray(list) || !list.every((item) => typeof item === "string" && item.length > 0)) {
      fail(`http.configurable_headers.${name}`, 'must be a list of header names ("*" matches any characters)');
    }
    lists[target!] = [...(lists[target!] ?? []), ...(list as string[]).map((item) => item.toLowerCase())];
  }
  return { includes: lists.includes, excludes: lists.excludes ?? [] };
}

function mountPrefix(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "" || value === "/") return undefined;
  if (typeof value !== "string" || !value.startsWith("/") || !/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(value)) {
    fail("http.mount_prefix", 'must be a path such as "/api" (letters, digits, ".", "_", "~", "-" between slashes)');
  }
  return (value as string).replace(/\/$/, "");
}
