import type { AddressGuardPolicy } from "../net/address-guard.ts";
import type { PipelineSettings } from "../config/pipeline.ts";
import type { DeploymentService } from "../controlplane/deployments/service.ts";
import type { IntegrationService } from "../controlplane/integrations/service.ts";
import type { LogService } from "../controlplane/logs/service.ts";
import type { RevisionService } from "../controlplane/revisions/service.ts";
import type { TenancyService } from "../controlplane/tenancy/service.ts";
import type { UploadService } from "../controlplane/uploads/service.ts";
import type { Database } from "../storage/database.ts";
import type { DockerSettings } from "./runtime/docker/docker-runtime.ts";
import type { Isolation } from "./runtime/isolation.ts";

/**
 * What the revision pipeline needs from the control plane that runs it. Built once by
 * startControlPlane (controlplane/server.ts) and passed to every part of the pipeline.
 */
export interface PipelineDeps {
  /** The control plane's database: the pipeline's own SQL (jobs, builds, what is served) runs here. */
  db: Database;
  /** The control plane's services, through which the pipeline reaches deployments, revisions, logs and uploads. */
  services: PipelineServices;
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

/**
 * The control plane's services, narrowed to what the pipeline calls: it moves revisions,
 * writes their logs, opens uploads and integrations' credentials and finishes deletions
 * through these, never through the control plane's SQL.
 */
export interface PipelineServices {
  revisions: Pick<RevisionService, "advance" | "startDue" | "onReady">;
  integrations: Pick<IntegrationService, "credentials">;
  logs: LogSink;
  uploads: Pick<UploadService, "received">;
  deployments: Pick<DeploymentService, "onDeletion" | "awaitingDeletion" | "finishDeletion">;
  tenancy: Pick<TenancyService, "organizationCount">;
}

/** Where revision logs are stored (LogWriter's batches). */
export type LogSink = Pick<LogService, "append" | "trim">;

/** The pipeline's own log: the server log, where crashes of agent processes show too. */
interface PipelineLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}
