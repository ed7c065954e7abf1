/**
 * Environment variable names a deployment's secrets may not use, because the platform sets
 * them for the agent server it runs (its port, its database and Redis, its identity and API
 * keys). Letting a secret override them would break the deployment or let it impersonate
 * the platform.
 *
 * Prefixes LANGGRAPH_ / LANGSMITH_ belong to the server, except the variables the vendor
 * documents as user settings (Agent Server "Environment variables" reference page): those
 * stay allowed so a configuration written for the vendor works unchanged.
 */

/** A C identifier, the vendor's rule for environment variable names. */
export const SECRET_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";

const RESERVED_NAMES: readonly string[] = [
  "PORT",
  "HOST",
  "DATABASE_URI",
  "DATABASE_URL",
  "POSTGRES_URI",
  "REDIS_URI",
  "LANGSMITH_API_KEY",
  "LANGCHAIN_API_KEY",
  "LANGGRAPH_API_KEY",
  "LANGSMITH_ENDPOINT",
  "LANGCHAIN_ENDPOINT",
  "LANGSERVE_GRAPHS",
  "LANGGRAPH_CONFIG",
];

const RESERVED_PREFIXES: readonly string[] = ["LANGGRAPH_", "LANGSMITH_", "SLIPWAY_"];

/** Documented user settings under a reserved prefix. */
const ALLOWED_UNDER_PREFIX: readonly string[] = ["LANGGRAPH_AUTH_TYPE", "LANGGRAPH_POSTGRES_POOL_MAX_SIZE", "LANGSMITH_TRACING", "LANGSMITH_RUNS_ENDPOINTS"];

/** Why `name` may not be a secret, or undefined when it may. Compared case-insensitively, so `port` cannot slip past. */
export function reservedReason(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.includes(upper)) return `${name} is reserved: the platform sets it for the agent server.`;
  if (ALLOWED_UNDER_PREFIX.includes(upper)) return undefined;
  const prefix = RESERVED_PREFIXES.find((p) => upper.startsWith(p));
  if (prefix) return `${name} is reserved: names starting with ${prefix} belong to the platform.`;
  return undefined;
}
