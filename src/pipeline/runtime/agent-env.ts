import { deploymentPathUrl } from "../../controlplane/deployments/records.ts";
import type { PipelineDeps } from "../context.ts";
import type { LaunchSpec } from "./runtime.ts";

/** At most this many replicas per revision, whatever resource_spec asks. */
export const MAX_REPLICAS = 16;

/**
 * How many replicas, and how much memory (MB) and CPU (cores) per replica resource_spec
 * asks for: the limits (memory_limit_mb, cpu_limit), else the requests (memory_mb, cpu).
 */
export function replicaShape(spec: LaunchSpec): { count: number; memoryMb: number | undefined; cpus: number | undefined } {
  const count = Math.min(MAX_REPLICAS, Math.max(1, spec.resourceSpec?.min_scale ?? 1));
  const resources = spec.resourceSpec;
  return { count, memoryMb: resources?.memory_limit_mb ?? resources?.memory_mb ?? undefined, cpus: resources?.cpu_limit ?? resources?.cpu ?? undefined };
}

/**
 * V8 settings of every agent process, before the deployment's own NODE_OPTIONS (which win).
 * Semi-spaces of 4 MB instead of 16: the young generation (up to three semi-spaces) stays
 * resident at rest, about 20 MB less per process; CPU per run measured the same
 * (decision 0053).
 */
export const AGENT_NODE_OPTIONS = "--max-semi-space-size=4";

/**
 * What an agent server of a deployment gets as its environment, whatever runs it: the
 * deployment's secrets, its storage, the key the router presents, and nothing of the
 * control plane's own (docs/decisions/0030).
 */
export function agentEnvironment(
  deps: PipelineDeps,
  spec: LaunchSpec,
  storageEnv: Record<string, string>,
  internalKey: string,
  memoryMb: number | undefined,
  /** The project's own runtime settings from its build (a Python environment's interpreter). */
  projectEnv: Record<string, string> = {},
): Record<string, string | undefined> {
  // The agent's own grace (runs in progress go on, then are handed back) fits inside ours.
  const agentGrace = Math.max(1, Math.floor(deps.settings.stopGraceMs / 1000) - 3);
  const publicUrl = deps.publicUrl?.();
  return {
    // Where graphs (and each run's metadata) find their deployment; a secret may say otherwise.
    ...(publicUrl ? { LANGGRAPH_API_URL: deploymentPathUrl(publicUrl, spec.deploymentId) } : {}),
    ...spec.secrets,
    ...projectEnv,
    ...storageEnv,
    SLIPWAY_AGENT_API_KEY: internalKey,
    SLIPWAY_DEPLOYMENT_ID: spec.deploymentId,
    SLIPWAY_REVISION_ID: spec.revisionId,
    SLIPWAY_SHUTDOWN_GRACE_SECONDS: String(agentGrace),
    // Ours first, then the author's own NODE_OPTIONS (a later flag wins); resource_spec's memory bounds the heap.
    NODE_OPTIONS: [AGENT_NODE_OPTIONS, spec.secrets.NODE_OPTIONS, memoryMb ? `--max-old-space-size=${memoryMb}` : undefined].filter(Boolean).join(" "),
  };
}
