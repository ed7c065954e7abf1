import { conflict } from "../../http/errors.ts";
import type { Queryable } from "../../storage/database.ts";
import type { ControlPlaneDeps } from "../context.ts";
import { findDeployment, lockDeployment, refreshDeploymentStatus, updateDeployment, type DeploymentRow } from "../deployments/repository.ts";
import { deploymentNotFound, revisionNotFound } from "../deployments/not-found.ts";
import type { ResourceSpec } from "../deployments/resource-spec.ts";
import type { DeploymentSource, SecretReference, SourceRevisionConfig } from "../deployments/schemas.ts";
import type { SealedSecrets } from "../secrets/sealed.ts";
import * as repo from "./repository.ts";
import type { Revision } from "./schemas.ts";
import { activeRevisionAfter, isInFlight, mayBecome, planAfterSettle, planNewRevision, transition, type RevisionStatus } from "./state-machine.ts";

/** What a new revision is made of: everything that needs a build or a restart. */
interface RevisionSpec {
  source: DeploymentSource;
  sourceRevisionConfig: SourceRevisionConfig;
  resourceSpec: ResourceSpec | null;
  secrets: SealedSecrets;
  secretReferences: SecretReference[] | null;
  /** Why it is made (create, patch, redeploy, push); shown in its log. */
  trigger?: RevisionTrigger;
  /** It waits until then even when nothing is in flight (a push waits for newer pushes). */
  notBefore?: Date;
  /** The build it reuses as is (a redeploy of a revision whose build still exists). */
  buildKey?: string | null;
  /** An uploaded-source revision with no upload named yet: it waits, holding the settings, until one is. */
  awaitingUpload?: boolean;
}

/** A status change asked of `advance`. */
interface Advance {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  to: RevisionStatus;
  message?: string | null;
  now: string;
  fence?: { worker: string; attempt: number };
}

/** When a revision waiting for an upload may start: never; a revision naming the upload supersedes it. */
const NEVER = new Date("9999-12-31T00:00:00Z");

type RevisionTrigger = "create" | "patch" | "redeploy" | "push" | "rotate_credentials";

/** What revisions need of the control plane (the pipeline's deps have it too). */
export type RevisionServiceDeps = Pick<ControlPlaneDeps, "db" | "now" | "newId">;

/**
 * The rules of revisions: the queue (one in flight per deployment, newer waiting ones
 * supersede older), the status transitions, redeploys and interrupts. Used by the
 * deployment and webhook services, the routes, and the pipeline's job runner.
 *
 * @example
 * const revisions = new RevisionService({ db, now: () => new Date(), newId: randomUUID });
 * await revisions.advance({ workspaceId, deploymentId, revisionId, to: "BUILDING", now: new Date().toISOString() });
 */
export class RevisionService {
  constructor(private readonly deps: RevisionServiceDeps) {}

  /**
   * Adds a revision to a deployment whose row the caller has locked (`lockDeployment`) in
   * `tx`, applying the queue rule, and makes it the deployment's latest revision. Returns
   * the new revision's id.
   */
  async enqueue(tx: Queryable, deployment: Pick<DeploymentRow, "id" | "workspace_id">, spec: RevisionSpec, now: string): Promise<string> {
    const siblings = await repo.activeSiblings(tx, deployment.workspace_id, deployment.id);
    const notBefore = spec.awaitingUpload ? NEVER : spec.notBefore;
    const delayed = notBefore !== undefined && notBefore.getTime() > new Date(now).getTime();
    const plan = planNewRevision(siblings, delayed);
    const id = this.deps.newId();
    await repo.setStatus(tx, deployment.workspace_id, plan.skip, "SKIPPED", `Superseded by revision ${id}.`, now);
    await repo.insertRevision(tx, {
      id,
      deploymentId: deployment.id,
      workspaceId: deployment.workspace_id,
      status: plan.status,
      statusMessage:
        plan.status === "CREATING"
          ? null
          : spec.awaitingUpload
            ? `Waiting for its source: POST /v2/deployments/${deployment.id}/upload-url, PUT the project's .tar.gz there, then PATCH source_revision_config.source_tarball_path.`
            : siblings.some((s) => isInFlight(s.status))
              ? "Waiting for the revision in progress to finish."
              : "Waiting a moment for newer pushes before building.",
      source: spec.source,
      sourceRevisionConfig: spec.sourceRevisionConfig,
      resourceSpec: spec.resourceSpec,
      secretNames: spec.secrets.names,
      secretsSealed: spec.secrets.sealed,
      secretReferences: spec.secretReferences,
      trigger: spec.trigger ?? null,
      notBefore: notBefore?.toISOString() ?? null,
      buildKey: spec.buildKey ?? null,
      now,
    });
    await updateDeployment(tx, deployment.workspace_id, deployment.id, { latestRevisionId: id, now });
    await refreshDeploymentStatus(tx, deployment.workspace_id, deployment.id, now);
    if (plan.status === "CREATING") await repo.announceRevisionReady(tx, deployment.workspace_id, deployment.id, id);
    return id;
  }

  /**
   * The one way a revision's status changes after creation (the pipeline's steps, an interrupt).
   * Checks the transition table, moves `active_revision_id` on DEPLOYED, and when the revision
   * leaves flight starts the revision waiting behind it. With `fence`, the change is made
   * only if that pipeline worker still holds the revision's job at that attempt (409 else).
   */
  async advance(input: Advance): Promise<Revision> {
    const { workspaceId, deploymentId, revisionId, to, now } = input;
    return this.deps.db.transaction(async (tx) => {
      const deployment = await lockDeployment(tx, workspaceId, deploymentId);
      if (!deployment) throw deploymentNotFound(deploymentId);
      const revision = await repo.getRevision(tx, workspaceId, deploymentId, revisionId);
      if (!revision) throw revisionNotFound(revisionId);
      if (input.fence && !(await repo.holdsJob(tx, revisionId, input.fence.worker, input.fence.attempt))) {
        throw conflict(`Revision ${revisionId} is no longer this worker's job (attempt ${input.fence.attempt}).`);
      }
      transition(revision.status, to);
      if (isInFlight(to) && !isInFlight(revision.status)) {
        const busy = (await repo.activeSiblings(tx, workspaceId, deploymentId)).find((s) => isInFlight(s.status));
        if (busy) throw conflict(`Revision ${busy.id} of deployment ${deploymentId} is already in progress.`);
      }
      await repo.setStatus(tx, workspaceId, [revisionId], to, input.message ?? null, now);
      const active = activeRevisionAfter(deployment.active_revision_id, revisionId, to);
      if (active !== deployment.active_revision_id) {
        await updateDeployment(tx, workspaceId, deploymentId, { activeRevisionId: active, now });
      }
      if (isInFlight(revision.status) && !isInFlight(to)) await startWaiting(tx, workspaceId, deploymentId, now);
      await refreshDeploymentStatus(tx, workspaceId, deploymentId, now);
      return toRevision((await repo.getRevision(tx, workspaceId, deploymentId, revisionId))!);
    });
  }

  /** Calls `listener` when a revision is ready to start (CREATING), made by any process; resolves to its removal. */
  onReady(listener: () => void): Promise<() => Promise<void>> {
    return this.deps.db.listen(repo.REVISION_READY_CHANNEL, () => listener());
  }

  /**
   * Starts waiting revisions that have become due (a push's quiet period is over) on
   * deployments with nothing in flight. Called by the pipeline's timer.
   */
  async startDue(now: Date): Promise<number> {
    const { db } = this.deps;
    const due = await repo.deploymentsWithDueRevisions(db, now.toISOString());
    for (const { workspace_id, deployment_id } of due) {
      await db.transaction(async (tx) => {
        if (!(await lockDeployment(tx, workspace_id, deployment_id))) return;
        await startWaiting(tx, workspace_id, deployment_id, now.toISOString());
        await refreshDeploymentStatus(tx, workspace_id, deployment_id, now.toISOString());
      });
    }
    return due.length;
  }

  /**
   * Rotates a deployment's database credential: a revision made from the active one
   * (same build, no install) whose processes get a new credential; the switch is a
   * deploy's (no request fails), and the replaced credential stops opening anything once
   * the replaced processes have stopped. 409 when there is none to rotate.
   */
  async rotateCredentials(workspaceId: string, deploymentId: string): Promise<void> {
    const { db } = this.deps;
    const deployment = await findDeployment(db, workspaceId, deploymentId);
    if (!deployment) throw deploymentNotFound(deploymentId);
    const active = deployment.active_revision_id ? await repo.getRevision(db, workspaceId, deploymentId, deployment.active_revision_id) : undefined;
    const refusal = rotationRefusal(deployment, active?.source, db.kind);
    if (refusal) throw conflict(refusal);
    await this.redeploy(workspaceId, deploymentId, active!.id, "rotate_credentials");
  }

  /**
   * Interrupts every waiting or in-flight revision of deployments being deleted, inside
   * the caller's transaction: their jobs stop at their next lease renewal.
   */
  async interruptForDeletion(tx: Queryable, workspaceId: string, deploymentIds: readonly string[], now: string): Promise<void> {
    const change = { from: mayBecome("INTERRUPTED"), to: "INTERRUPTED" as const, message: "The deployment is being deleted.", now };
    await repo.setStatusOfDeployments(tx, workspaceId, deploymentIds, change);
  }

  async interrupt(workspaceId: string, deploymentId: string, revisionId: string): Promise<Revision> {
    return this.advance({
      workspaceId,
      deploymentId,
      revisionId,
      to: "INTERRUPTED",
      message: "Interrupted by request.",
      now: this.deps.now().toISOString(),
    });
  }

  async get(workspaceId: string, deploymentId: string, revisionId: string): Promise<Revision> {
    const { db } = this.deps;
    const revision = await repo.getRevision(db, workspaceId, deploymentId, revisionId);
    if (!revision) {
      if (!(await findDeployment(db, workspaceId, deploymentId))) throw deploymentNotFound(deploymentId);
      throw revisionNotFound(revisionId);
    }
    return toRevision(revision);
  }

  async list(
    workspaceId: string,
    deploymentId: string,
    query: { statuses?: RevisionStatus[]; remote?: boolean; limit: number; offset: number },
  ): Promise<{ resources: Revision[]; offset: number }> {
    const { db } = this.deps;
    const deployment = await findDeployment(db, workspaceId, deploymentId);
    if (!deployment) throw deploymentNotFound(deploymentId);
    const remote = deployment.source_config.listener_id != null;
    const rows = query.remote !== undefined && query.remote !== remote ? [] : await repo.listRevisions(db, workspaceId, deploymentId, query);
    return { resources: rows.map(toRevision), offset: query.offset + rows.length };
  }

  /** A new revision made from an earlier one's snapshot (same commit, config, resources and secrets). */
  async redeploy(workspaceId: string, deploymentId: string, revisionId: string, trigger: RevisionTrigger = "redeploy"): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const deployment = await lockDeployment(tx, workspaceId, deploymentId);
      if (!deployment) throw deploymentNotFound(deploymentId);
      const revision = await repo.getRevision(tx, workspaceId, deploymentId, revisionId);
      if (!revision) throw revisionNotFound(revisionId);
      const secrets = (await repo.getSealedSecrets(tx, workspaceId, revisionId))!;
      const buildKey = await repo.getBuildKey(tx, workspaceId, revisionId);
      await this.enqueue(
        tx,
        deployment,
        {
          source: revision.source,
          sourceRevisionConfig: revision.source_revision_config,
          resourceSpec: revision.resource_spec,
          secrets,
          secretReferences: revision.secret_references,
          trigger,
          buildKey,
        },
        this.deps.now().toISOString(),
      );
    });
  }
}

/**
 * What refuses a credential rotation (409), if anything: only a deployment that runs
 * with a PostgreSQL role of its own has a credential to rotate (docs/decisions/0030).
 */
export function rotationRefusal(
  deployment: Pick<DeploymentRow, "id" | "active_revision_id">,
  activeSource: DeploymentSource | undefined,
  backend: "pglite" | "postgres",
): string | undefined {
  if (backend !== "postgres") {
    return "This control plane keeps each deployment's data in an embedded database reached through the deployment's own socket: there is no database credential to rotate.";
  }
  if (!deployment.active_revision_id || !activeSource) return `Deployment ${deployment.id} has no deployed revision: nothing runs with a credential to rotate.`;
  if (activeSource === "external_docker" || activeSource === "internal_docker") {
    return `Deployment ${deployment.id} runs an image whose storage is its own (its DATABASE_URI secret): change that secret to rotate it.`;
  }
  return undefined;
}

/** Starts the newest waiting revision of a locked deployment when nothing is in flight and it is due. */
async function startWaiting(tx: Queryable, workspaceId: string, deploymentId: string, now: string): Promise<void> {
  const next = planAfterSettle(await repo.activeSiblings(tx, workspaceId, deploymentId), new Date(now));
  await repo.setStatus(tx, workspaceId, next.skip, "SKIPPED", "Superseded by a newer revision.", now);
  if (next.start) {
    await repo.setStatus(tx, workspaceId, [next.start], "CREATING", null, now);
    await repo.announceRevisionReady(tx, workspaceId, deploymentId, next.start);
  }
}

function toRevision(row: repo.RevisionRow): Revision {
  const config = row.source_revision_config;
  return {
    id: row.id,
    deployment_id: row.deployment_id,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    status: row.status,
    status_message: row.status_message,
    source: row.source,
    source_revision_config: {
      repo_ref: config.repo_ref ?? null,
      langgraph_config_path: config.langgraph_config_path ?? null,
      image_uri: config.image_uri ?? null,
      source_tarball_path: config.source_tarball_path ?? null,
      repo_commit_sha: config.repo_commit_sha ?? null,
    },
  };
}
