import type { CorsConfig } from "../../http/cors.ts";
import type { AgentEndpoint } from "./agent-endpoint.ts";
import type { LogWriter } from "../log-writer.ts";
import type { RevisionGroup } from "./revision-group.ts";

/**
 * What runs deployments (docs/decisions/0030). The local runtime (sandboxed processes)
 * implements it; a Docker runtime (an image per revision, a container per replica) and
 * later a Kubernetes one (a Deployment and a Service per revision, driven by a listener in
 * the cluster) implement the same: the revision job, the restore at start, the deleter
 * and the router see nothing else.
 */
export interface DeploymentRuntime {
  /** Starts a revision's replicas and waits until all answer /ok (else DEPLOY_FAILED). */
  launch(spec: LaunchSpec, signal: AbortSignal): Promise<RevisionGroup>;
  /** Starts a revision's replicas without waiting (a restart serves what was DEPLOYED). */
  start(spec: LaunchSpec): Promise<RevisionGroup>;
  /** New requests go to `group` from now on; the group it replaces drains, then stops. */
  promote(workspaceId: string, group: RevisionGroup): void;
  /** What serves a deployment now (the router asks). */
  target(deploymentId: string): RevisionGroup | undefined;
  /** Stops what serves a deployment that is idle, and its storage (docs/decisions/0039); false when something else of it runs. */
  sleep(deploymentId: string): Promise<boolean>;
  /** Calls `listener` each time a group starts serving its deployment. */
  onPromote(listener: (group: RevisionGroup) => void): void;
  /** Stops a group that never served. */
  stopGroup(group: RevisionGroup): Promise<void>;
  /** After the restore at start: removes what a previous control plane left that serves nothing now. */
  tidy(): Promise<void>;
  /** Stops every replica of a deployment being deleted. */
  stopDeployment(deploymentId: string): Promise<void>;
  close(): Promise<void>;
}

/** One replica of a revision: a sandboxed process here, a container or a pod elsewhere. */
export interface Replica {
  /** Where the router reaches it, while it listens. */
  readonly endpoint: AgentEndpoint | undefined;
  /** http.cors of its langgraph.json, once it said (the router's own answers carry it). */
  readonly cors: CorsConfig | undefined;
  /** Answers 200 on /ok now (the readiness probe). */
  healthy(timeoutMs?: number): Promise<boolean>;
  /** Stops claiming new runs; requests in progress go on. */
  drain(): void;
  /** Its runs underway and next scheduled work, if it can say (docs/decisions/0039); undefined: unknown, so it stays awake. */
  activity(timeoutMs: number): Promise<ReplicaActivity | undefined>;
  /** Asks it to stop, kills it after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** What an agent server says keeps its deployment awake (the agent's AgentActivity, as sent over IPC). */
export interface ReplicaActivity {
  busy: boolean;
  /** Seconds until its next cron firing or delayed run; null: nothing scheduled. */
  next_due_in_seconds: number | null;
}

export interface LaunchSpec {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  /** What it runs: a build of the project (git and upload sources) or, on a container runtime, an image (image sources). */
  build?: { directory: string; config_file: string };
  image?: string;
  /** Deployment secrets: the replicas' environment, and all they get of the control plane's. */
  secrets: Record<string, string>;
  /** Replicas (min_scale), memory per replica (memory_limit_mb, else memory_mb) and CPU (cpu_limit, else cpu). */
  resourceSpec: {
    min_scale?: number | null;
    memory_mb?: number | null;
    memory_limit_mb?: number | null;
    cpu?: number | null;
    cpu_limit?: number | null;
  } | null;
  /** The revision's deploy log. */
  log: LogWriter;
  /** Its replicas get a new database credential (a credential rotation); the replaced ones keep theirs until they stop. */
  rotateCredentials?: boolean;
}
