import { SectionError } from "./config-sections.ts";

/**
 * langgraph.json's `webhooks`: what the project allows as a run's or a cron's `webhook`
 * (`url`), and headers sent with every webhook call (`headers`, whose values may name
 * environment variables as `${{ env.NAME }}`; only names starting with `env_prefix`, so
 * that a header cannot carry out any other secret of the deployment).
 */
export interface WebhooksSection {
  url: WebhookUrlRules;
  /** Header name -> value with its `${{ env.NAME }}` templates, resolved at start. */
  headers: Record<string, string>;
  envPrefix: string;
}

export interface WebhookUrlRules {
  /** Refuse `http://` URLs. */
  requireHttps: boolean;
  /** When not empty, the only hosts taken: exact names, or `*.example.com` for its subdomains (not the apex). */
  allowedDomains: string[];
  /** When not empty, the only ports taken (a URL without a port uses 80 or 443). */
  allowedPorts: number[];
  maxUrlLength?: number;
  /** Refuse relative URLs, which call this server's own routes. */
  disableLoopback: boolean;
}

const DEFAULT_ENV_PREFIX = "LG_WEBHOOK_";
const TEMPLATE = /\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the server for every call; a project's header may not replace them. */
const RESERVED_HEADERS = new Set(["content-type", "content-length", "host", "transfer-encoding", "connection"]);

const fail = (key: string, why: string): never => {
  throw new SectionError(`${key}: ${why}`);
};

export const NO_WEBHOOK_RULES: WebhooksSection = {
  url: { requireHttps: false, allowedDomains: [], allowedPorts: [], disableLoopback: false },
  headers: {},
  envPrefix: DEFAULT_ENV_PREFIX,
};

export function readWebhooks(raw: unknown): WebhooksSection {
  if (raw === undefined || raw === null) return NO_WEBHOOK_RULES;
  const section = objectOf(raw, "webhooks");
  for (const key of Object.keys(section)) {
    if (!["env_prefix", "url", "headers"].includes(key)) fail(`webhooks.${key}`, "unknown key (known: env_prefix, url, headers)");
  }
  const envPrefix = section.env_prefix ?? DEFAULT_ENV_PREFIX;
  if (typeof envPrefix !== "string" || !envPrefix) fail("webhooks.env_prefix", "must be a non-empty string");
  return { url: readUrlRules(section.url), headers: readHeaders(section.headers, envPrefix as string), envPrefix: envPrefix as string };
}

function readUrlRules(raw: unknown): WebhookUrlRules {
  const rules: WebhookUrlRules = { ...NO_WEBHOOK_RULES.url, allowedDomains: [], allowedPorts: [] };
  if (raw === undefined || raw === null) return rules;
  const section = objectOf(raw, "webhooks.url");
  for (const [key, value] of Object.entries(section)) {
    const where = `webhooks.url.${key}`;
    if (key === "require_https" || key === "disable_loopback") {
      if (typeof value !== "boolean") fail(where, "must be true or false");
      if (key === "require_https") rules.requireHttps = value as boolean;
      else rules.disableLoopback = value as boolean;
    } else if (key === "allowed_domains") {
      if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string" || !domainPattern(entry))) {
        fail(where, 'must be a list of host names, or "*.example.com" for the subdomains of a name');
      }
      rules.allowedDomains = (value as string[]).map((entry) => entry.toLowerCase().replace(/\.$/, ""));
    } else if (key === "allowed_ports") {
      if (!Array.isArray(value) || value.some((port) => !Number.isInteger(port) || port < 1 || port > 65535)) {
        fail(where, "must be a list of port numbers (1 to 65535)");
      }
      rules.allowedPorts = value as number[];
    } else if (key === "max_url_length") {
      if (!Number.isInteger(value) || (value as number) < 1) fail(where, "must be a positive whole number");
      rules.maxUrlLength = value as number;
    } else {
      fail(where, "unknown key (known: require_https, allowed_domains, allowed_ports, max_url_length, disable_loopback)");
    }
  }
  return rules;
}

function readHeaders(raw: unknown, envPrefix: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(objectOf(raw, "webhooks.headers"))) {
    const where = `webhooks.headers.${name}`;
    if (!HEADER_NAME.test(name)) fail(where, "is not a valid header name");
    if (RESERVED_HEADERS.has(name.toLowerCase())) fail(where, "is set by the server for every webhook call");
    if (typeof value !== "string" || /[\r\n]/.test(value)) fail(where, "must be a string on one line");
    for (const [, variable] of (value as string).matchAll(TEMPLATE)) {
      if (!variable.startsWith(envPrefix)) fail(where, `names env.${variable}, which does not start with webhooks.env_prefix "${envPrefix}"`);
    }
    headers[name] = value as string;
  }
  return headers;
}

/**
 * The header values with their `${{ env.NAME }}` replaced from `env`. A variable that is
 * not set stops the start, naming it: a webhook sent without its credential would fail at
 * the receiver, long after anyone could see why.
 */
export function resolveWebhookHeaders(section: WebhooksSection, env: Record<string, string | undefined>): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, template] of Object.entries(section.headers)) {
    resolved[name] = template.replace(TEMPLATE, (_match, variable: string) => {
      const value = env[variable];
      if (value === undefined)
        throw new SectionError(`webhooks.headers.${name}: environment variable ${variable} is not set (set it as a secret of the deployment)`);
      if (/[\r\n]/.test(value)) throw new SectionError(`webhooks.headers.${name}: environment variable ${variable} holds a line break`);
      return value;
    });
  }
  return resolved;
}

/** Whether `host` is one of the allowed domains: an exact name, or a subdomain of a `*.` entry. */
export function domainAllowed(host: string, allowedDomains: string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowedDomains.some((entry) => (entry.startsWith("*.") ? name.endsWith(entry.slice(1)) && name.length > entry.length - 1 : name === entry));
}

function domainPattern(entry: string): boolean {
  return /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/.test(entry);
}

function objectOf(raw: unknown, key: string): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail(key, "must be an object");
  return raw as Record<string, unknown>;
}
