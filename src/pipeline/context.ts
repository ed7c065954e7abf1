import type { AddressGuardPolicy } from "../net/address-guard.ts";
import type { Database } from "../storage/database.ts";
import type { DockerSettings } from "./runtime/docker/docker-runtime.ts";
import type { Isolation } from "./runtime/isolation.ts";

/**
 * What the revision pipeline needs from the control plane that runs it. Built once by
 * `slipway up` (or a test) and passed to every part of the pipeline.
 */
export interface PipelineDeps {
  /** The control plane's database (revisions, builds, logs). */
  db: Database;
  /** Opens deployment secrets and integration tokens. */
  secretsKey: Buffer;
  now: () => Date;
  newId: () => string;
  /** Where builds, sources, uploads and embedded deployment databases live. */
  dataDir: string;
  /**
   * The PostgreSQL server the control plane uses, if any: each deployment then gets a
   * schema of its own there. Without it, each gets an embedded database (see storage.ts).
   */
  databaseUrl?: string;
  /** Private or loopback git hosts the fetches may reach (an operator's allow-list). */
  gitHosts: AddressGuardPolicy;
  settings: PipelineSettings;
  log: PipelineLog;
  /**
   * The control plane's public address, once it listens: a deployment's agent processes
   * get `<it>/deployments/<id>` as LANGGRAPH_API_URL, where graphs find their own server.
   */
  publicUrl?: () => string;
  /** How deployments' code is sandboxed and limited here (probed at start when not given). */
  isolation?: Isolation;
  /** The operator accepts running several organizations' code unsandboxed (--allow-unsandboxed). */
  allowUnsandboxed?: boolean;
  /** Run deployments as Docker containers (`slipway up --runtime docker`) instead of local processes. */
  docker?: DockerSettings;
}

export interface PipelineSettings {
  /** How long a new revision's processes may take to answer /ok before DEPLOY_FAILED. */
  readinessTimeoutMs: number;
  /** How long the graph check at build time may take before the build goes on without it. */
  checkTimeoutMs: number;
  /** How long the previous revision keeps its requests and runs before SIGTERM. */
  drainTimeoutMs: number;
  /** Between SIGTERM and SIGKILL (the agent's own grace is set a little shorter). */
  stopGraceMs: number;
  /** Lease of a revision job without a heartbeat. */
  jobLeaseMs: number;
  /** How long a push waits for a newer push before it builds. */
  pushQuietMs: number;
  /** The largest uploaded source, in bytes. */
  maxUploadBytes: number;
  /** Names (a trailing `*`: a prefix) of the control plane's environment that installs and build_commands get besides config/build-env.ts's list. */
  buildEnv: string[];
  /** Minutes idle before a deployment without a setting of its own sleeps (`--sleep-after`); 0: never (docs/decisions/0039). */
  sleepAfterMinutes: number;
  /** How long a "minute" of the sleep rules lasts: 60 000 ms, shorter only in tests. */
  sleepMinuteMs: number;
  /** Builds kept per deployment: those of its last revisions that deployed, the active one always among them (docs/decisions/0051). */
  keepBuilds: number;
  /** Slipway's package managers' download caches are emptied past this size (MB). */
  packageCacheLimitMb: number;
}

export const PIPELINE_DEFAULTS: PipelineSettings = {
  readinessTimeoutMs: 300_000,
  checkTimeoutMs: 60_000,
  drainTimeoutMs: 30_000,
  stopGraceMs: 10_000,
  jobLeaseMs: 30_000,
  pushQuietMs: 3_000,
  maxUploadBytes: 200 * 1024 * 1024,
  buildEnv: [],
  sleepAfterMinutes: 0,
  sleepMinuteMs: 60_000,
  keepBuilds: 3,
  packageCacheLimitMb: 2048,
};

/** The pipeline's own log: the server log, where crashes of agent processes show too. */
interface PipelineLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}
