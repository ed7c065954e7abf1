import { existsSync } from "node:fs";
import { openSecrets } from "../controlplane/secrets/sealed.ts";
import { getBuild } from "./builder/repository.ts";
import type { PipelineDeps } from "./context.ts";
import { LogWriter } from "./log-writer.ts";
import type { RevisionGroup } from "./runtime/revision-group.ts";
import type { DeploymentRuntime } from "./runtime/runtime.ts";
import { activeRevisions, type ServedRevision } from "./runtime/repository.ts";

/**
 * At start-up, serves again every deployment's active revision (the processes of the
 * previous control plane went with it), except those asleep: they start on their next
 * request or scheduled work (docs/decisions/0039). Processes are started without
 * waiting: the router holds requests briefly until one listens. A revision whose build
 * is gone is reported in its deploy log and the server log; its deployment answers 503,
 * saying so, until a new revision is deployed.
 */
export async function restoreDeployments(deps: PipelineDeps, runtime: DeploymentRuntime, unserved: UnservedRevisions): Promise<void> {
  for (const served of await activeRevisions(deps.db)) {
    await serveAgain(deps, runtime, served, "The control plane restarted: starting this revision again.", unserved);
  }
}

/**
 * The deployments whose active revision could not be served again because its build is
 * gone: the router answers their requests at once with the reason, instead of holding
 * them for a start that will not come. A revision promoted later clears the entry.
 */
export class UnservedRevisions {
  private readonly gone = new Map<string, string>();

  note(deploymentId: string, revisionId: string): void {
    this.gone.set(deploymentId, revisionId);
  }

  clear(deploymentId: string): void {
    this.gone.delete(deploymentId);
  }

  /** Why the deployment cannot be served now, or undefined when nothing stands in the way. */
  why(deploymentId: string): string | undefined {
    const revisionId = this.gone.get(deploymentId);
    return revisionId && `The build of deployment ${deploymentId}'s active revision ${revisionId} is gone, so it cannot be served: deploy a new revision.`;
  }
}

/**
 * Starts a deployment's active revision again (a restart, a wake) and sends its requests
 * there; undefined when its build is gone.
 */
export async function serveAgain(
  deps: PipelineDeps,
  runtime: DeploymentRuntime,
  served: ServedRevision,
  why: string,
  unserved: UnservedRevisions,
): Promise<RevisionGroup | undefined> {
  const target = { workspaceId: served.workspace_id, deploymentId: served.deployment_id, revisionId: served.revision_id };
  const secrets = Object.fromEntries(openSecrets(deps.secretsKey, served.deployment_id, served.secrets_sealed).map((s) => [s.name, s.value]));
  const log = new LogWriter(deps.services.logs, { ...target, type: "deploy" }, Object.values(secrets), (error) =>
    deps.log.warn({ err: error, revision_id: served.revision_id }, "writing a revision log failed"),
  );
  const build = served.build_key ? await getBuild(deps.db, served.build_key) : undefined;
  const image = served.image_uri ?? undefined;
  if (!image && (!build || !existsSync(build.directory))) {
    log.error("This revision's build is gone, so it cannot be served again. Redeploy a revision to serve the deployment.");
    deps.log.error({ deployment_id: served.deployment_id, revision_id: served.revision_id }, "active revision's build is missing; not served");
    await log.flush();
    unserved.note(served.deployment_id, served.revision_id);
    return undefined;
  }
  log.info(why);
  const group = await runtime.start({ ...target, build: image ? undefined : build, image, secrets, resourceSpec: served.resource_spec as never, log });
  log.hide(group.internalKey);
  runtime.promote(served.workspace_id, group);
  return group;
}
