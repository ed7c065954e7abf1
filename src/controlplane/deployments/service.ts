import { conflict, forbidden, invalidField } from "../../http/errors.ts";
import type { Queryable } from "../../storage/database.ts";
import type { ControlPlaneDeps, TenantContext } from "../context.ts";
import { findIntegration } from "../integrations/repository.ts";
import { getListener } from "../listeners/repository.ts";
import * as revisions from "../revisions/repository.ts";
import type { RevisionService } from "../revisions/service.ts";
import { checkSecretNames, NO_SECRETS, sealSecrets } from "../secrets/sealed.ts";
import { deploymentNotFound } from "./not-found.ts";
import { toDeployment } from "./records.ts";
import * as repo from "./repository.ts";
import {
  checkApplicable,
  checkBuildOnPush,
  checkImmutable,
  checkRequiredOnCreate,
  checkSleepSetting,
  checkSourceFields,
  givenRevisionConfig,
  givenSourceConfig,
  storedSourceConfig,
  wantsNewRevision,
  type SourceConfigInput,
} from "./rules.ts";
import { findUpload } from "../uploads/repository.ts";
import type { Deployment, DeploymentCreateRequest, DeploymentPatchRequest, DeploymentSource, SecretReference } from "./schemas.ts";

/**
 * The operator's plan limit on deployments per workspace. 403 rather than 429: the limit
 * is a standing refusal, as the vendor's plan-gated listeners are (403 naming the
 * workspace), not a rate that waiting lifts; and the SDKs retry 429 but not 403.
 */
async function checkQuota(tx: Queryable, workspaceId: string, max: number | undefined): Promise<void> {
  if (!max) return;
  if ((await repo.countDeploymentsLocked(tx, workspaceId)) < max) return;
  throw forbidden(
    `Workspace ID '${workspaceId}' has reached its limit of ${max} deployments on this control plane. ` +
      "Delete a deployment first, or ask the operator to raise --max-deployments-per-workspace.",
  );
}

/**
 * Deployments: create (with its first revision), read, patch (a new revision when what is
 * built or run changes), delete. Each write is one transaction; every check runs before the
 * first write, and a refused request leaves nothing behind.
 *
 * @example
 * const deployments = new DeploymentService(deps, new RevisionService(deps));
 * const deployment = await deployments.create(tenant, body); // body: a DeploymentCreateRequest
 * await deployments.patch(tenant.workspaceId, deployment.id, { secrets: [{ name: "KEY", value: "v2" }] });
 */
export class DeploymentService {
  /** `deps` is read at each call, not copied: `slipway up` fills in `publicUrl` once it listens. */
  constructor(
    private readonly deps: ControlPlaneDeps,
    private readonly revisions: RevisionService,
  ) {}

  async create(tenant: TenantContext, body: DeploymentCreateRequest): Promise<Deployment> {
    const { deps } = this;
    const workspaceId = tenant.workspaceId;
    checkRuntimeFor(body.source, deps.containerRuntime === true);
    const config = givenSourceConfig(body.source_config);
    const revisionConfig = givenRevisionConfig(body.source_revision_config);
    checkApplicable(body.source, config, revisionConfig, body.secret_references != null);
    checkRequiredOnCreate(body.source, config, revisionConfig);
    checkSourceFields(config, revisionConfig);
    if (revisionConfig.source_tarball_path !== undefined) {
      // An upload URL is made for an existing deployment: there cannot be an upload for this one yet.
      throw invalidField(
        ["body", "source_revision_config", "source_tarball_path"],
        "Create the deployment without it, then POST /v2/deployments/{id}/upload-url, PUT the .tar.gz, and PATCH source_tarball_path.",
      );
    }
    checkBuildOnPush(config.build_on_push, revisionConfig.repo_ref, ["body", "source_config", "build_on_push"]);
    checkSecrets(body.secrets ?? [], body.secret_references ?? []);
    checkSleepSetting(body.slipway_sleep_after_minutes, deps.containerRuntime === true);
    await checkListener(deps.db, workspaceId, config);
    await checkIntegration(deps.db, workspaceId, config);

    const id = deps.newId();
    const now = deps.now().toISOString();
    await deps.db.transaction(async (tx) => {
      await checkQuota(tx, workspaceId, deps.maxDeploymentsPerWorkspace);
      const inserted = await repo.insertDeployment(tx, {
        id,
        workspaceId,
        name: body.name,
        source: body.source,
        sourceConfig: storedSourceConfig(undefined, config),
        // Nothing serves until a revision is DEPLOYED (refreshDeploymentStatus moves it on).
        status: "UNUSED",
        sleepAfterMinutes: body.slipway_sleep_after_minutes ?? null,
        now,
      });
      if (!inserted) throw conflict(`A deployment named '${body.name}' already exists in workspace ID '${workspaceId}'.`);
      await this.revisions.enqueue(
        tx,
        { id, workspace_id: workspaceId },
        {
          source: body.source,
          sourceRevisionConfig: { ...revisionConfig, repo_commit_sha: null },
          resourceSpec: config.resource_spec ?? null,
          secrets: sealSecrets(deps.secretsKey, id, body.secrets ?? []),
          secretReferences: body.secret_references ?? null,
          trigger: "create",
          // An uploaded source comes after creation: this revision keeps the settings and
          // waits; the PATCH that names the upload makes the revision that builds.
          awaitingUpload: body.source === "internal_source",
        },
        now,
      );
    });
    return this.get(workspaceId, id);
  }

  async get(workspaceId: string, id: string): Promise<Deployment> {
    const { deps } = this;
    const view = await repo.getDeploymentView(deps.db, workspaceId, id);
    if (!view) throw deploymentNotFound(id);
    return toDeployment(view, deps.publicUrl);
  }

  async list(workspaceId: string, filter: repo.DeploymentFilter & { tagValueIds?: string[] }): Promise<{ resources: Deployment[]; offset: number }> {
    const { deps } = this;
    // Deployments carry no tags here, so a tag filter matches none of them.
    const views = filter.tagValueIds?.length ? [] : await repo.listDeploymentViews(deps.db, workspaceId, filter);
    return { resources: views.map((v) => toDeployment(v, deps.publicUrl)), offset: filter.offset + views.length };
  }

  async patch(workspaceId: string, id: string, patch: DeploymentPatchRequest): Promise<Deployment> {
    const { deps } = this;
    await deps.db.transaction(async (tx) => {
      const current = await repo.lockDeployment(tx, workspaceId, id);
      if (!current) throw deploymentNotFound(id);
      const config = givenSourceConfig(patch.source_config);
      const revisionConfig = givenRevisionConfig(patch.source_revision_config);
      // A value no git host could take (a hostile repo_url) is a 422 at its field, as at creation, before "cannot change" (400).
      checkSourceFields(config, revisionConfig);
      checkImmutable(current, patch);
      checkApplicable(current.source, config, revisionConfig, patch.secret_references != null);
      if (revisionConfig.source_tarball_path !== undefined) await checkUploaded(tx, workspaceId, id, revisionConfig.source_tarball_path);
      if (patch.secrets != null || patch.secret_references != null) {
        checkSecrets(patch.secrets ?? [], patch.secret_references ?? []);
      }
      checkSleepSetting(patch.slipway_sleep_after_minutes, deps.containerRuntime === true);
      const latest = current.latest_revision_id ? await revisions.getRevision(tx, workspaceId, id, current.latest_revision_id) : undefined;
      const nextConfig = storedSourceConfig(current.source_config, config);
      const repoRef = revisionConfig.repo_ref ?? latest?.source_revision_config.repo_ref;
      const where = config.build_on_push !== undefined ? ["body", "source_config", "build_on_push"] : ["body", "source_revision_config", "repo_ref"];
      checkBuildOnPush(nextConfig.build_on_push, repoRef, where);

      const now = deps.now().toISOString();
      if (wantsNewRevision(patch, revisionConfig)) {
        const carried = latest ? await revisions.getSealedSecrets(tx, workspaceId, latest.id) : undefined;
        const sourceRevisionConfig = { ...latest?.source_revision_config, ...revisionConfig, repo_commit_sha: null };
        await this.revisions.enqueue(
          tx,
          current,
          {
            source: current.source,
            // Given fields replace the latest revision's; the commit is resolved afresh by the build.
            sourceRevisionConfig,
            resourceSpec: config.resource_spec ?? latest?.resource_spec ?? null,
            // A given list replaces the secrets (values cannot be read back to merge them).
            secrets: patch.secrets != null ? sealSecrets(deps.secretsKey, id, patch.secrets) : (carried ?? NO_SECRETS),
            secretReferences: patch.secret_references ?? latest?.secret_references ?? null,
            trigger: "patch",
            awaitingUpload: current.source === "internal_source" && !sourceRevisionConfig.source_tarball_path,
          },
          now,
        );
      }
      const sleepAfterMinutes = patch.slipway_sleep_after_minutes;
      const configChanged = JSON.stringify(nextConfig) !== JSON.stringify(storedSourceConfig(current.source_config, {}));
      // null puts the deployment back on the control plane's default; absent leaves it as it is.
      const sleepChanged = sleepAfterMinutes !== undefined && sleepAfterMinutes !== current.sleep_after_minutes;
      if (configChanged || sleepChanged) {
        await repo.updateDeployment(tx, workspaceId, id, {
          sourceConfig: configChanged ? nextConfig : undefined,
          sleepAfterMinutes: sleepChanged ? sleepAfterMinutes : undefined,
          now,
        });
      }
    });
    return this.get(workspaceId, id);
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const deleted = await this.markForDeletion(workspaceId, [id]);
    if (deleted.length === 0) throw deploymentNotFound(id);
  }

  /**
   * A delete answers at once: the deployment shows AWAITING_DELETE and its URL answers 404
   * while the pipeline stops its processes and removes its builds and data, then its rows.
   */
  private async markForDeletion(workspaceId: string, ids: readonly string[]): Promise<string[]> {
    const { deps } = this;
    const marked = await deps.db.transaction(async (tx) => {
      const now = deps.now().toISOString();
      const marked = await repo.markForDeletion(tx, workspaceId, ids, now);
      if (marked.length > 0) {
        await this.revisions.interruptForDeletion(tx, workspaceId, marked, now);
        await repo.announceDeletion(tx, marked);
      }
      return marked;
    });
    if (marked.length > 0) deps.onDeploymentsDeleted?.(marked);
    return marked;
  }

  /** Deletes what exists of `ids`; the rest are reported, not fatal (the vendor's partial success). */
  /** Calls `listener` when deployments are marked for deletion, by any process; resolves to its removal. */
  onDeletion(listener: () => void): Promise<() => Promise<void>> {
    return this.deps.db.listen(repo.DELETE_CHANNEL, () => listener());
  }

  /** Deployments whose deletion is pending: the pipeline finishes them, also after a restart. */
  awaitingDeletion(): Promise<{ id: string; workspace_id: string }[]> {
    return repo.deploymentsAwaitingDelete(this.deps.db);
  }

  /** The last step of a deletion, once its processes, data and builds are gone: the row (revisions, builds, uploads and logs cascade). */
  async finishDeletion(id: string): Promise<void> {
    await repo.deleteDeploymentRow(this.deps.db, id);
  }

  async deleteMany(
    workspaceId: string,
    ids: readonly string[],
  ): Promise<{ deleted_deployment_ids: string[]; failed: { deployment_id: string; detail: string }[] }> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const deleted = await this.markForDeletion(workspaceId, unique);
    const failed = unique.filter((id) => !deleted.includes(id)).map((id) => ({ deployment_id: id, detail: deploymentNotFound(id).message }));
    return { deleted_deployment_ids: unique.filter((id) => deleted.includes(id)), failed };
  }
}

function checkSecrets(secrets: readonly { name: string }[], references: readonly SecretReference[]): void {
  checkSecretNames(secrets, ["body", "secrets"]);
  checkSecretNames(references, ["body", "secret_references"]);
  const names = new Set(secrets.map((s) => s.name));
  references.forEach((ref, index) => {
    if (names.has(ref.name)) {
      throw invalidField(["body", "secret_references", index, "name"], `${ref.name} is also given in secrets.`, "duplicate_name");
    }
  });
}

/** Image sources need the Docker runtime (`slipway up --runtime docker`). */
function checkRuntimeFor(source: DeploymentSource, containerRuntime: boolean): void {
  if ((source === "external_docker" || source === "internal_docker") && !containerRuntime) {
    throw invalidField(
      ["body", "source"],
      `Source '${source}' runs a container image, which needs the Docker runtime (start the control plane with \`slipway up --runtime docker\`); ` +
        "this one runs deployments as local processes: deploy from a git repository ('github') or an uploaded directory ('internal_source').",
    );
  }
}

/** A source_tarball_path must name a finished upload of this deployment. */
async function checkUploaded(q: Queryable, workspaceId: string, deploymentId: string, objectPath: string): Promise<void> {
  const upload = await findUpload(q, workspaceId, deploymentId, objectPath);
  if (!upload || upload.uploaded_at === null) {
    throw invalidField(
      ["body", "source_revision_config", "source_tarball_path"],
      `No finished upload ${objectPath} for this deployment: ask POST /v2/deployments/${deploymentId}/upload-url for a URL, PUT the .tar.gz there, then give its object_path.`,
    );
  }
}

/** An integration of another workspace is as unknown as one that does not exist. */
async function checkIntegration(q: Queryable, workspaceId: string, config: SourceConfigInput): Promise<void> {
  if (config.integration_id && !(await findIntegration(q, workspaceId, config.integration_id.toLowerCase()))) {
    throw invalidField(["body", "source_config", "integration_id"], `Integration ID ${config.integration_id} not found.`);
  }
}

async function checkListener(q: Queryable, workspaceId: string, config: SourceConfigInput): Promise<void> {
  if (config.listener_id && !(await getListener(q, workspaceId, config.listener_id))) {
    throw invalidField(["body", "source_config", "listener_id"], `Listener ID ${config.listener_id} not found.`);
  }
}
