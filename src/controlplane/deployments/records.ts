import type { DeploymentView } from "./repository.ts";
import type { Deployment } from "./schemas.ts";

/** A deployment's address under the control plane's own (without a custom_url). */
export function deploymentPathUrl(publicUrl: string, deploymentId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/deployments/${deploymentId}`;
}

/**
 * The Deployment record from its row and its latest revision. Secrets show names only: the
 * view never selects sealed values, and the response schema has no `value` to serialize.
 */
export function toDeployment(view: DeploymentView, publicUrl: string): Deployment {
  const config = view.source_config;
  const revision = view.source_revision_config;
  const url = config.custom_url ?? deploymentPathUrl(publicUrl, view.id);
  return {
    id: view.id,
    tenant_id: view.workspace_id,
    name: view.name,
    source: view.source,
    source_config: {
      integration_id: config.integration_id ?? null,
      repo_url: config.repo_url ?? null,
      deployment_type: config.deployment_type ?? null,
      build_on_push: config.build_on_push ?? null,
      // The vendor fills custom_url in for deployments it hosts (read-only): the address they answer at.
      custom_url: url,
      resource_spec: view.resource_spec ?? null,
      listener_id: config.listener_id ?? null,
      listener_config: config.listener_config ?? null,
      install_command: config.install_command ?? null,
      build_command: config.build_command ?? null,
    },
    source_revision_config: {
      repo_ref: revision?.repo_ref ?? null,
      langgraph_config_path: revision?.langgraph_config_path ?? null,
      image_uri: revision?.image_uri ?? null,
      source_tarball_path: revision?.source_tarball_path ?? null,
      repo_commit_sha: revision?.repo_commit_sha ?? null,
    },
    secrets: (view.secret_names ?? []).map((name) => ({ name })),
    secret_references: view.secret_references ?? null,
    created_at: new Date(view.created_at).toISOString(),
    updated_at: new Date(view.updated_at).toISOString(),
    status: view.status,
    latest_revision_id: view.latest_revision_id,
    active_revision_id: view.active_revision_id,
    image_version: view.image_version,
    url,
    slipway_sleep_after_minutes: view.sleep_after_minutes,
    slipway_sleeping: view.sleeping_since !== null,
    slipway_sleeping_since: view.sleeping_since === null ? null : new Date(view.sleeping_since).toISOString(),
  };
}
