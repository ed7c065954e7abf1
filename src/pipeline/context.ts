import type { AddressGuardPolicy } from "../net/address-guard.ts";
import type { PipelineSettings } from "../config/pipeline.ts";
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

/** The pipeline's own log: the server log, where crashes of agent processes show too. */
interface PipelineLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}
