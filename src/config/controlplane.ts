import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BearerConfig } from "../auth/bearer.ts";
import { generateSecretsKey, parseSecretsKey } from "../auth/secret-box.ts";
import { canonicalIp, type AddressGuardPolicy } from "../net/address-guard.ts";
import { assertSchemaName } from "../storage/database.ts";

/**
 * Typed control-plane configuration: command-line flags first, then environment.
 *
 * | setting        | flag             | environment                 | default            |
 * |----------------|------------------|-----------------------------|--------------------|
 * | data directory | --data-dir       | SLIPWAY_DATA_DIR            | .slipway           |
 * | PostgreSQL     | --database-url   | SLIPWAY_DATABASE_URL        | (embedded PGlite)  |
 * | schema         |                  | SLIPWAY_CONTROL_SCHEMA      | control            |
 * | listen host    | --host           | SLIPWAY_HOST                | 127.0.0.1          |
 * | listen port    | --port           | SLIPWAY_PORT                | 8080               |
 * | region         | --region         | SLIPWAY_REGION              | us                 |
 * | public URL     |                  | SLIPWAY_PUBLIC_URL          | http://host:port   |
 * | secrets key    |                  | SLIPWAY_SECRETS_KEY         | <data-dir>/secrets.key, created on first start |
 * | bearer tokens  |                  | SLIPWAY_JWT_ISSUER, SLIPWAY_JWT_AUDIENCE, SLIPWAY_JWT_JWKS_URL / SLIPWAY_JWT_JWKS_FILE / SLIPWAY_JWT_SECRET | off |
 * | private git hosts | --allow-private-git-hosts | SLIPWAY_GIT_ALLOW_HOSTS | none (public hosts only) |
 * | deployment quota | --max-deployments-per-workspace | SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE | 25 (0: no limit) |
 */
type Region = "us" | "eu";
type Env = Record<string, string | undefined>;

interface StorageFlags {
  dataDir?: string;
  databaseUrl?: string;
}

interface ServeFlags extends StorageFlags {
  port?: string | number;
  host?: string;
  region?: string;
  /** Comma-separated host names / IP literals. */
  allowPrivateGitHosts?: string;
  maxDeploymentsPerWorkspace?: string | number;
}

interface StorageConfig {
  /** Everything local to this installation: the embedded database, secrets.key, the lock file. */
  dataDir: string;
  /** postgres://... when running on a PostgreSQL server; undefined for embedded PGlite. */
  databaseUrl?: string;
  schema: string;
  /** Where embedded PGlite keeps the control plane's database. */
  pgliteDir: string;
}

export interface ControlPlaneConfig extends StorageConfig {
  host: string;
  port: number;
  region: Region;
  publicUrl?: string;
  bearer?: BearerConfig;
  /** Git hosts (integrations, fetches) let through although private or loopback. */
  gitHosts: AddressGuardPolicy;
  /** Deployments a workspace may have at once; 0 for no limit. */
  maxDeploymentsPerWorkspace: number;
}

/**
 * A serving deployment costs its agent processes and, on the embedded database, about
 * 200 MB of this process: 25 of them fill a 16 GB machine. Operators raise or lower it.
 */
const DEFAULT_MAX_DEPLOYMENTS_PER_WORKSPACE = 25;

/** Named in refusals, so the message says how to let a host through. */
export const GIT_HOSTS_SETTING = "--allow-private-git-hosts (or SLIPWAY_GIT_ALLOW_HOSTS)";

export function resolveStorageConfig(flags: StorageFlags, env: Env = process.env): StorageConfig {
  const dataDir = resolve(flags.dataDir ?? env.SLIPWAY_DATA_DIR ?? ".slipway");
  const databaseUrl = flags.databaseUrl ?? (env.SLIPWAY_DATABASE_URL || undefined);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error("--database-url must be a postgres:// or postgresql:// URL");
  }
  const schema = assertSchemaName(env.SLIPWAY_CONTROL_SCHEMA || "control");
  return { dataDir, databaseUrl, schema, pgliteDir: join(dataDir, "control-db") };
}

export function resolveControlPlaneConfig(flags: ServeFlags, env: Env = process.env): ControlPlaneConfig {
  const storage = resolveStorageConfig(flags, env);
  const port = Number(flags.port ?? env.SLIPWAY_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, not '${flags.port ?? env.SLIPWAY_PORT}'`);
  const region = flags.region ?? env.SLIPWAY_REGION ?? "us";
  if (region !== "us" && region !== "eu") throw new Error(`--region must be us or eu, not '${region}'`);
  return {
    ...storage,
    host: flags.host ?? env.SLIPWAY_HOST ?? "127.0.0.1",
    port,
    region,
    publicUrl: env.SLIPWAY_PUBLIC_URL || undefined,
    bearer: bearerFromEnv(env),
    gitHosts: { allowHosts: hostList(flags.allowPrivateGitHosts ?? env.SLIPWAY_GIT_ALLOW_HOSTS ?? "", GIT_HOSTS_SETTING), allowSetting: GIT_HOSTS_SETTING },
    maxDeploymentsPerWorkspace: deploymentQuota(flags.maxDeploymentsPerWorkspace ?? env.SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE),
  };
}

function deploymentQuota(value: string | number | undefined): number {
  if (value === undefined || value === "") return DEFAULT_MAX_DEPLOYMENTS_PER_WORKSPACE;
  const quota = Number(value);
  if (!Number.isInteger(quota) || quota < 0) throw new Error(`--max-deployments-per-workspace must be a whole number, 0 for no limit, not '${value}'`);
  return quota;
}

/** A comma-separated list of host names or IP literals; a URL or a CIDR is refused at start. */
function hostList(value: string, setting: string): string[] {
  const hosts = value
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  for (const host of hosts) {
    if (!canonicalIp(host) && !/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_.])?$/i.test(host)) {
      throw new Error(`${setting}: '${host}' is not a host name or an IP address (give names like git.internal or 127.0.0.1, comma-separated)`);
    }
  }
  return hosts;
}

function bearerFromEnv(env: Env): BearerConfig | undefined {
  if (!env.SLIPWAY_JWT_ISSUER) return undefined;
  return {
    issuer: env.SLIPWAY_JWT_ISSUER,
    audience: env.SLIPWAY_JWT_AUDIENCE || "slipway",
    jwksUrl: env.SLIPWAY_JWT_JWKS_URL || undefined,
    jwksFile: env.SLIPWAY_JWT_JWKS_FILE || undefined,
    secret: env.SLIPWAY_JWT_SECRET || undefined,
  };
}

/**
 * The key that seals secrets at rest. SLIPWAY_SECRETS_KEY (64 hex chars or base64 of
 * 32 bytes) wins; otherwise `<data-dir>/secrets.key` is read, or created with mode 0600
 * on first start. Several nodes sharing one PostgreSQL server must all be given the
 * same SLIPWAY_SECRETS_KEY; the database's key canary refuses a mismatching one.
 */
export function loadSecretsKey(dataDir: string, env: Env = process.env): { key: Buffer; source: "env" | "file" | "generated"; path?: string } {
  if (env.SLIPWAY_SECRETS_KEY) return { key: parseSecretsKey(env.SLIPWAY_SECRETS_KEY), source: "env" };
  const path = join(dataDir, "secrets.key");
  if (existsSync(path)) return { key: parseSecretsKey(readFileSync(path, "utf8")), source: "file", path };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = generateSecretsKey();
  try {
    writeFileSync(path, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return { key: parseSecretsKey(readFileSync(path, "utf8")), source: "file", path };
    throw error;
  }
  chmodSync(path, 0o600);
  return { key, source: "generated", path };
}

/**
 * Embedded PGlite must have one process per data directory: two would corrupt it.
 * `slipway up` holds `<data-dir>/control.pid` while it runs; offline admin commands
 * refuse to open the directory while a live process holds it.
 */
export function dataDirHolder(dataDir: string): number | undefined {
  const path = join(dataDir, "control.pid");
  if (!existsSync(path)) return undefined;
  const pid = Number(readFileSync(path, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}

/** Takes the data-directory lock for this process; returns its release function. */
export function lockDataDir(dataDir: string): () => void {
  const holder = dataDirHolder(dataDir);
  if (holder !== undefined) {
    throw new Error(`${dataDir} is in use by another Slipway process (pid ${holder}); stop it or use --database-url`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "control.pid");
  writeFileSync(path, `${process.pid}\n`);
  return () => {
    try {
      if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // already gone
    }
  };
}

/**
 * How the control database opens (storage/open.ts's options): a new embedded one starts
 * from the data directory's empty cluster, which its deployments' databases reuse.
 */
export function controlDatabaseOptions(config: StorageConfig) {
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.pgliteDir,
    pgliteTemplate: async () => (await import("../storage/pglite.ts")).dataDirTemplate(config.dataDir),
    schema: config.schema,
    component: "control" as const,
  };
}
