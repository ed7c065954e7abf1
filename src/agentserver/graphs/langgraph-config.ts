import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { corsConfigProblem, type CorsConfig } from "../../http/cors.ts";
import { nodeVersionProblem } from "./node-version.ts";

/** The parts of `langgraph.json` the agent server reads. */
export interface LanggraphConfig {
  /** Directory of the config file; graph paths resolve against it. */
  root: string;
  graphs: Record<string, { path: string; exportName: string; description?: string }>;
  env: Record<string, string>;
  /** `http` settings the server honours. */
  http: {
    cors?: CorsConfig;
    /** Route groups turned off with `http.disable_<group>: true`. */
    disabled: Set<"assistants" | "threads" | "runs" | "store">;
  };
  /** Raw `store`, `checkpointer`, `http` ... sections, kept for /info and later features. */
  raw: Record<string, unknown>;
}

export class ConfigError extends Error {}

/** Reads and checks a langgraph.json; every mistake names the key at fault. */
export function readLanggraphConfig(configPath: string): LanggraphConfig {
  const file = resolve(configPath);
  if (!existsSync(file)) throw new ConfigError(`config file not found: ${file}`);
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConfigError(`${file}: expected a JSON object`);
  const root = dirname(file);
  const nodeProblem = nodeVersionProblem(raw.node_version);
  if (nodeProblem) throw new ConfigError(`${file}: node_version: ${nodeProblem}`);
  const graphsRaw = raw.graphs;
  if (typeof graphsRaw !== "object" || graphsRaw === null || Array.isArray(graphsRaw) || Object.keys(graphsRaw).length === 0) {
    throw new ConfigError(`${file}: "graphs" must be an object with at least one graph`);
  }
  const graphs: LanggraphConfig["graphs"] = {};
  for (const [graphId, spec] of Object.entries(graphsRaw as Record<string, unknown>)) {
    const entry = typeof spec === "string" ? { path: spec } : (spec as { path?: unknown; description?: unknown });
    if (typeof entry?.path !== "string") throw new ConfigError(`${file}: graphs.${graphId} must be "path:export" or {"path": ...}`);
    const [modulePath, exportName = "default"] = splitGraphSpec(entry.path);
    if (!modulePath) throw new ConfigError(`${file}: graphs.${graphId}: empty module path`);
    graphs[graphId] = {
      path: resolve(root, modulePath),
      exportName,
      description: typeof entry.description === "string" ? entry.description : undefined,
    };
  }
  return { root, graphs, env: readEnv(raw.env, root, file), http: readHttp(raw, file), raw };
}

/** Route groups `http.disable_<group>` may turn off. */
const DISABLEABLE = ["assistants", "threads", "runs", "store"] as const;
/** Groups this server does not serve at all: disabling them asks for what already holds. */
const NOT_SERVED = ["mcp", "a2a", "ui", "webhooks"];

/**
 * Reads `http` and refuses settings that would change the server's behaviour but are
 * not built yet, naming the key: a custom auth handler silently left out would leave a
 * server open that its author meant to protect. Build-time keys (dependencies,
 * dockerfile_lines, ...) are for the build and need nothing here; node_version is
 * checked against the running Node in readLanggraphConfig.
 */
function readHttp(raw: Record<string, unknown>, file: string): LanggraphConfig["http"] {
  const refuse = (key: string, why: string) => {
    throw new ConfigError(`${file}: ${key}: ${why}`);
  };
  if (raw.auth !== undefined && raw.auth !== null) {
    refuse("auth", "custom authentication handlers are not supported yet; protect the server with --api-key");
  }
  for (const [section, keys] of [["store", ["index", "ttl"]], ["checkpointer", ["ttl"]]] as const) {
    const value = raw[section] as Record<string, unknown> | undefined;
    for (const key of keys) if (value && typeof value === "object" && value[key] != null) refuse(`${section}.${key}`, "not supported yet");
  }
  const http = raw.http;
  const disabled: LanggraphConfig["http"]["disabled"] = new Set();
  if (http === undefined || http === null) return { disabled };
  if (typeof http !== "object" || Array.isArray(http)) refuse("http", "must be an object");
  let cors: CorsConfig | undefined;
  for (const [key, value] of Object.entries(http as Record<string, unknown>)) {
    if (key === "cors") {
      const problem = corsConfigProblem(value);
      if (problem) refuse("http.cors", problem);
      cors = value as CorsConfig;
      continue;
    }
    const group = key.startsWith("disable_") ? key.slice("disable_".length) : undefined;
    if (group !== undefined) {
      if (typeof value !== "boolean") refuse(`http.${key}`, "must be true or false");
      if (!value || NOT_SERVED.includes(group)) continue;
      if ((DISABLEABLE as readonly string[]).includes(group)) {
        disabled.add(group as (typeof DISABLEABLE)[number]);
        continue;
      }
    }
    if (value === undefined || value === null || value === false) continue;
    refuse(`http.${key}`, "not supported by this server yet");
  }
  return { cors, disabled };
}

/** "./src/agent.ts:graph" -> ["./src/agent.ts", "graph"]; a Windows drive letter is not a separator. */
function splitGraphSpec(spec: string): [string, string | undefined] {
  const at = spec.lastIndexOf(":");
  if (at <= 1) return [spec, undefined];
  return [spec.slice(0, at), spec.slice(at + 1) || undefined];
}

function readEnv(env: unknown, root: string, file: string): Record<string, string> {
  if (env === undefined || env === null) return {};
  if (typeof env === "string") {
    const envFile = resolve(root, env);
    if (!existsSync(envFile)) throw new ConfigError(`${file}: env file not found: ${envFile}`);
    return parseDotenv(readFileSync(envFile));
  }
  if (typeof env === "object" && !Array.isArray(env)) {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(env as Record<string, unknown>)) out[key] = String(value);
    return out;
  }
  throw new ConfigError(`${file}: "env" must be an object or a path to a .env file`);
}
