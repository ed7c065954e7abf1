import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import {
  readAuth,
  readCheckpointer,
  readStore,
  readUi,
  SectionError,
  type AuthSection,
  type CheckpointerTtlSection,
  type StoreIndexSection,
  type StoreTtlSection,
  type UiSection,
} from "./config-sections.ts";
import { resolveGraphSpec, type GraphSpec } from "./graph-spec.ts";
import { readHttp, type HttpSection } from "./http-config.ts";
import { readWebhooks, type WebhooksSection } from "./webhooks-config.ts";
import { checkNodeVersion } from "../../config/node-version.ts";

/** The parts of `langgraph.json` the agent server reads. */
export interface LanggraphConfig {
  /** Directory of the config file; graph paths resolve against it. */
  root: string;
  graphs: Record<string, GraphSpec>;
  env: Record<string, string>;
  /** What the server goes on without, to be told at start (a missing env file, an older node_version). */
  warnings: string[];
  /** `http` settings the server honours. */
  http: HttpSection;
  /** `auth.path`: the project's custom authentication and authorization. */
  auth?: AuthSection;
  /** `ui` and `ui_config`: generative UI components, bundled at start. */
  ui?: UiSection;
  store: { index?: StoreIndexSection; ttl?: StoreTtlSection };
  checkpointer: { ttl?: CheckpointerTtlSection };
  /** `webhooks`: the project's rules for run and cron webhooks, and headers sent with them. */
  webhooks: WebhooksSection;
  /** The file as read, kept for /info and later features. */
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
  const warnings: string[] = [];
  const node = checkNodeVersion(raw.node_version);
  if (node.error) throw new ConfigError(`${file}: node_version: ${node.error}`);
  if (node.warning) warnings.push(`${file}: node_version: ${node.warning}`);
  const graphsRaw = raw.graphs;
  if (typeof graphsRaw !== "object" || graphsRaw === null || Array.isArray(graphsRaw) || Object.keys(graphsRaw).length === 0) {
    throw new ConfigError(`${file}: "graphs" must be an object with at least one graph`);
  }
  const graphs: LanggraphConfig["graphs"] = {};
  for (const [graphId, spec] of Object.entries(graphsRaw as Record<string, unknown>)) {
    const entry = typeof spec === "string" ? { path: spec } : (spec as { path?: unknown; description?: unknown });
    if (typeof entry?.path !== "string") throw new ConfigError(`${file}: graphs.${graphId} must be "path:export" or {"path": ...}`);
    const [modulePath, exportName] = splitGraphSpec(entry.path);
    if (!modulePath) throw new ConfigError(`${file}: graphs.${graphId}: empty module path`);
    graphs[graphId] = {
      ...resolveGraphSpec(root, modulePath, exportName),
      description: typeof entry.description === "string" ? entry.description : undefined,
    };
  }
  const env = readEnv(raw.env, root, file, warnings);
  if (raw.encryption !== undefined && raw.encryption !== null) {
    throw new ConfigError(
      `${file}: encryption: custom encryption of stored data (encryption.path) is not supported yet; remove the key to deploy without it (Slipway keeps the data in the deployment's own database)`,
    );
  }
  try {
    return {
      root,
      graphs,
      env,
      warnings,
      http: readHttp(raw.http, root),
      auth: readAuth(raw.auth, root),
      ui: readUi(raw.ui, raw.ui_config, root),
      store: readStore(raw.store, root),
      checkpointer: readCheckpointer(raw.checkpointer),
      webhooks: readWebhooks(raw.webhooks),
      raw,
    };
  } catch (error) {
    // Build-time keys (dependencies, dockerfile_lines, ...) are for the build and need nothing here.
    if (error instanceof SectionError) throw new ConfigError(`${file}: ${error.message}`);
    throw error;
  }
}

/** "./src/agent.ts:graph" -> ["./src/agent.ts", "graph"]; a Windows drive letter is not a separator. */
function splitGraphSpec(spec: string): [string, string | undefined] {
  const at = spec.lastIndexOf(":");
  if (at <= 1) return [spec, undefined];
  return [spec.slice(0, at), spec.slice(at + 1) || undefined];
}

/**
 * `env`: a path to a .env file, or an object of values. A missing file is a warning, as
 * with the vendor's tools: `.env` is usually git-ignored, so a pushed or uploaded project
 * has none, and its values come from the deployment's secrets instead.
 */
function readEnv(env: unknown, root: string, file: string, warnings: string[]): Record<string, string> {
  if (env === undefined || env === null) return {};
  if (typeof env === "string") {
    const envFile = resolve(root, env);
    if (!existsSync(envFile)) {
      warnings.push(`${file}: env file ${JSON.stringify(env)} not found (${envFile}): continuing without it; set its values as the deployment's secrets`);
      return {};
    }
    return parseDotenv(readFileSync(envFile));
  }
  if (typeof env === "object" && !Array.isArray(env)) {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(env as Record<string, unknown>)) out[key] = String(value);
    return out;
  }
  throw new ConfigError(`${file}: "env" must be an object or a path to a .env file`);
}
