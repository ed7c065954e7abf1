import type { RateLimitOptions } from "../ratelimit/plugin.ts";

/** Settings of `slipway agent`, from flags with environment fallbacks. */
export interface AgentServerOptions {
  /** Path to langgraph.json. */
  configPath: string;
  /** The deployment and revision this server runs for (set by the control plane): `/metrics` labels. */
  deploymentId?: string;
  revisionId?: string;
  port?: number;
  host?: string;
  /**
   * A Unix socket (a named pipe on Windows) to listen on instead of host and port; the
   * control plane starts its agent processes so (docs/decisions/0018).
   */
  socketPath?: string;
  /** Embedded PGlite data directory (default .slipway/agent). */
  dataDir?: string;
  /** A PostgreSQL server instead of the embedded store. */
  databaseUrl?: string;
  /**
   * Socket of the embedded database a control plane shares between a deployment's agent
   * processes (env SLIPWAY_STORAGE_SOCKET; set by the control plane, not by hand).
   */
  storageSocket?: string;
  /** Schema for this server's tables (one per deployment on a shared server). */
  schema?: string;
  /** Required X-Api-Key value; no key means open access. */
  apiKey?: string;
  /**
   * Runs executed at once by this process (default 500: graphs mostly wait on models
   * and tools, and a waiting run costs memory, not CPU). Claiming also pauses while the
   * JavaScript heap is above `runHeapFraction` of its limit.
   */
  workers?: number;
  /** Fraction of V8's heap limit above which no further run is claimed (default 0.7). */
  runHeapFraction?: number;
  /** Seconds a claimed run stays leased without a heartbeat. */
  leaseSeconds?: number;
  /** Interval of SSE heartbeat comments. */
  heartbeatMs?: number;
  /** Hosts run webhooks may reach even though they are private/loopback. */
  webhookAllowHosts?: string[];
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  logLevel?: string;
  /** Rate limiting in front of every route (see src/ratelimit/); none when absent. */
  rateLimit?: RateLimitOptions;
  /**
   * At shutdown: how long runs in progress may go on before they are handed back to the
   * queue, and then how long requests still waiting (a /wait on a run handed back) get
   * before their connections are closed.
   */
  shutdownGraceMs?: number;
  /**
   * Stream memory (decision 0027): events of a run held once for all its readers, and
   * events one reader may hold of its own before it is told it fell behind.
   */
  streamBufferEvents?: number;
  streamReaderEvents?: number;
}

export const AGENT_DEFAULTS = {
  port: 2024,
  host: "127.0.0.1",
  dataDir: ".slipway/agent",
  schema: "slipway_agent",
  workers: 500,
  runHeapFraction: 0.7,
  /** PostgreSQL connections per process: runs hold one only while a statement runs. */
  maxPoolSize: 30,
  leaseSeconds: 30,
  heartbeatMs: 10_000,
  bodyLimit: 10 * 1024 * 1024,
  shutdownGraceMs: 5_000,
} as const;

/** Fills unset options from SLIPWAY_* environment variables. */
export function agentOptionsFromEnv(options: AgentServerOptions, env: NodeJS.ProcessEnv = process.env): AgentServerOptions {
  const list = (value: string | undefined) =>
    value
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  return {
    ...options,
    databaseUrl: options.databaseUrl ?? env.SLIPWAY_DATABASE_URL ?? undefined,
    storageSocket: options.storageSocket ?? (env.SLIPWAY_STORAGE_SOCKET || undefined),
    apiKey: options.apiKey ?? env.SLIPWAY_AGENT_API_KEY ?? undefined,
    workers: options.workers ?? positiveIntOrUndefined(env.SLIPWAY_AGENT_WORKERS),
    leaseSeconds: options.leaseSeconds ?? numberOrUndefined(env.SLIPWAY_RUN_LEASE_SECONDS),
    shutdownGraceMs: options.shutdownGraceMs ?? secondsAsMs(env.SLIPWAY_SHUTDOWN_GRACE_SECONDS),
    webhookAllowHosts: options.webhookAllowHosts ?? list(env.SLIPWAY_WEBHOOK_ALLOW_HOSTS),
    deploymentId: options.deploymentId ?? (env.SLIPWAY_DEPLOYMENT_ID || undefined),
    revisionId: options.revisionId ?? (env.SLIPWAY_REVISION_ID || undefined),
    streamBufferEvents: options.streamBufferEvents ?? positiveIntOrUndefined(env.SLIPWAY_STREAM_BUFFER_EVENTS),
    streamReaderEvents: options.streamReaderEvents ?? positiveIntOrUndefined(env.SLIPWAY_STREAM_READER_EVENTS),
  };
}

/** Connections for the database pool: a few beyond the runs, up to `maxPoolSize`. */
export function databasePoolSize(workers: number): number {
  return Math.min(AGENT_DEFAULTS.maxPoolSize, Math.max(10, workers + 10));
}

function positiveIntOrUndefined(value: string | undefined): number | undefined {
  const n = numberOrUndefined(value);
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

function secondsAsMs(value: string | undefined): number | undefined {
  const seconds = numberOrUndefined(value);
  return seconds !== undefined && seconds >= 0 ? seconds * 1000 : undefined;
}

function numberOrUndefined(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
