import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { removeFetchedSource, SOURCE_PREFIX } from "../builder/stale-sources.ts";
import { canTransition, type RevisionStatus } from "../../controlplane/revisions/state-machine.ts";
import { openSecrets } from "../../controlplane/secrets/sealed.ts";
import { buildSource, reusableBuild, type BuildRecipe } from "../builder/builder.ts";
import { getBuild, type BuildRow } from "../builder/repository.ts";
import type { PipelineDeps } from "../context.ts";
import { JobStopped, StepFailure } from "../failure.ts";
import { LogWriter } from "../log-writer.ts";
import type { DeploymentRuntime } from "../runtime/runtime.ts";
import { unredactedSecrets } from "../redaction.ts";
import type { RevisionGroup } from "../runtime/revision-group.ts";
import { fetchSource, identifySource, type RevisionSource, type SourceDeps } from "../source/prepare.ts";
import { loadJobRevision, recordBuild, recordCommit, type JobClaim, type JobRevision } from "./repository.ts";

/** A job resumed this many times after its control plane died gives up with a message. */
const MAX_ATTEMPTS = 3;

interface JobContext {
  deps: PipelineDeps;
  runtime: DeploymentRuntime;
  claim: JobClaim;
  worker: string;
  signal: AbortSignal;
}

/**
 * One revision from where its status says it is to DEPLOYED, or to the failure of the
 * step that failed:
 *
 *   CREATING         the source's identity (the commit a ref names, or the tarball's
 *                    sha256); the source itself unless a build of it exists
 *   AWAITING_BUILD → BUILDING: install, build, check (or reuse the existing build)
 *   AWAITING_DEPLOY → DEPLOYING: start the processes beside the serving revision, wait
 *                    for /ok, then DEPLOYED and traffic moves to it
 *
 * A job resumed after a crash starts at its recorded status; work done in a step whose
 * status was not recorded yet is done again (builds are keyed, so a finished one is reused).
 */
export async function runRevisionJob(context: JobContext): Promise<void> {
  const { deps, claim } = context;
  const revision = await loadJobRevision(deps.db, claim.revision_id);
  if (!revision) return;
  const secrets = Object.fromEntries(openSecrets(deps.secretsKey, revision.deployment_id, revision.secrets_sealed).map((s) => [s.name, s.value]));
  const target = { workspaceId: revision.workspace_id, deploymentId: revision.deployment_id, revisionId: revision.id };
  const onLogError = (error: Error) => deps.log.warn({ err: error, revision_id: revision.id }, "writing a revision log failed");
  const buildLog = new LogWriter(deps.services.logs, { ...target, type: "build" }, Object.values(secrets), onLogError);
  const deployLog = new LogWriter(deps.services.logs, { ...target, type: "deploy" }, Object.values(secrets), onLogError);
  const shown = unredactedSecrets(secrets);
  if (shown.length > 0) {
    buildLog.line(
      "WARNING",
      `Secrets shown as they are in these logs: ${shown.join(", ")}. A boolean, a plain number or a value under 6 characters cannot be told from ordinary words, so it is not hidden.`,
    );
  }
  const job = new Job(context, revision, secrets, buildLog, deployLog);
  try {
    await job.run();
  } finally {
    await buildLog.flush();
    await deployLog.flush();
  }
}

class Job {
  private status: RevisionStatus;
  private sourceId: string | undefined;
  private sourceDir: string | undefined;
  private build: BuildRow | undefined;
  private group: RevisionGroup | undefined;
  private readonly sourceDeps: SourceDeps;

  constructor(
    private readonly context: JobContext,
    private readonly revision: JobRevision,
    private readonly secrets: Record<string, string>,
    private readonly buildLog: LogWriter,
    private readonly deployLog: LogWriter,
  ) {
    this.status = revision.status;
    this.sourceDeps = context.deps;
  }

  async run(): Promise<void> {
    const { claim } = this.context;
    try {
      if (claim.job_attempts > MAX_ATTEMPTS) {
        throw new StepFailure(
          failureFor(this.status),
          `The control plane stopped ${claim.job_attempts - 1} times while this revision was ${this.status}; it was given up. ` +
            "Redeploy it to try again, and look at the control plane's log for why it stopped.",
        );
      }
      if (claim.job_attempts > 1)
        this.log().line("WARNING", `Resuming at ${this.status} (attempt ${claim.job_attempts}): the control plane stopped while it worked on this revision.`);
      else this.buildLog.info(`Revision ${this.revision.id} (${this.image() ? `image ${this.image()}` : describeSource(this.source())}).`);
      if (this.status === "CREATING") {
        await this.identify();
        await this.move("AWAITING_BUILD");
      }
      if (this.status === "AWAITING_BUILD") await this.move("BUILDING");
      if (this.status === "BUILDING") {
        if (this.image()) this.buildLog.info(`Image source: ${this.image()} runs as it is, nothing to build.`);
        else await this.ensureBuild();
        await this.move("AWAITING_DEPLOY");
      }
      if (this.status === "AWAITING_DEPLOY") await this.move("DEPLOYING");
      if (this.status === "DEPLOYING") await this.deploy();
    } catch (error) {
      if (this.group) await this.context.runtime.stopGroup(this.group);
      if (error instanceof StepFailure) return this.fail(error);
      if (error instanceof JobStopped || this.context.signal.aborted) return;
      this.context.deps.log.error({ err: error, revision_id: this.revision.id }, "revision job failed unexpectedly");
      return this.fail(new StepFailure(failureFor(this.status), `${stepName(this.status)} failed unexpectedly: ${(error as Error).message}`));
    } finally {
      // A build takes its fetched source over by renaming it; what is left was not built.
      removeFetchedSource(this.sourceDir);
    }
  }

  /** CREATING: what exactly will be built; the source only when no build of it exists. */
  private async identify(): Promise<void> {
    if (this.image()) return;
    if (await this.existingBuild()) return;
    const source = this.source();
    this.sourceId = await identifySource(this.sourceDeps, source, this.logContext(this.buildLog));
    if (source.kind === "git" && source.commit !== this.sourceId) await recordCommit(this.context.deps.db, this.revision.id, this.sourceId);
    this.build = await reusableBuild(this.context.deps, { deploymentId: this.revision.deployment_id, sourceId: this.sourceId, recipe: this.recipe() });
    if (this.build) {
      this.buildLog.info(`Reusing build ${this.build.key} of revision ${this.build.revision_id}: same source and recipe, nothing to install.`);
      await recordBuild(this.context.deps.db, this.revision.id, this.build.key);
      return;
    }
    await this.fetch();
  }

  private async fetch(): Promise<void> {
    const { deps } = this.context;
    const tmp = join(deps.dataDir, "builds", `${SOURCE_PREFIX}${deps.newId()}`);
    mkdirSync(tmp, { recursive: true });
    await fetchSource(this.sourceDeps, this.source(), this.sourceId!, tmp, this.logContext(this.buildLog));
    this.sourceDir = tmp;
  }

  /** BUILDING (or a resumed DEPLOYING whose build is gone): a build of this source and recipe. */
  private async ensureBuild(): Promise<BuildRow> {
    if (this.build ?? (await this.existingBuild())) return this.build!;
    const { deps } = this.context;
    if (!this.sourceId) {
      this.sourceId = await identifySource(this.sourceDeps, this.source(), this.logContext(this.buildLog));
      this.build = await reusableBuild(deps, { deploymentId: this.revision.deployment_id, sourceId: this.sourceId, recipe: this.recipe() });
      if (this.build) {
        await recordBuild(deps.db, this.revision.id, this.build.key);
        return this.build;
      }
    }
    if (!this.sourceDir || !existsSync(this.sourceDir)) await this.fetch();
    this.build = await buildSource(
      deps,
      { ...this.target(), sourceId: this.sourceId, recipe: this.recipe(), runtimeEnv: this.secrets, log: this.buildLog, signal: this.context.signal },
      this.sourceDir!,
    );
    await recordBuild(deps.db, this.revision.id, this.build.key);
    return this.build;
  }

  /** DEPLOYING: the new processes beside the serving ones; DEPLOYED and the switch once all answer /ok. */
  private async deploy(): Promise<void> {
    const image = this.image();
    const build = image ? undefined : (this.build ?? (await this.existingBuild()));
    if (!build && !image) this.deployLog.line("WARNING", "The build of this revision is gone: building it again.");
    const ready = image ? undefined : (build ?? (await this.ensureBuild()));
    const { runtime, signal } = this.context;
    this.deployLog.info(ready ? `Starting the agent server (build ${ready.key}).` : `Starting image ${image}.`);
    if (this.revision.trigger === "rotate_credentials")
      this.deployLog.info("Credential rotation: its processes get a new database credential; the replaced ones keep theirs until they have stopped.");
    this.group = await runtime.launch(
      {
        ...this.target(),
        build: ready,
        image,
        secrets: this.secrets,
        resourceSpec: this.revision.resource_spec as never,
        log: this.deployLog,
        rotateCredentials: this.revision.trigger === "rotate_credentials",
      },
      signal,
    );
    this.deployLog.hide(this.group.internalKey);
    await this.move("DEPLOYED");
    runtime.promote(this.revision.workspace_id, this.group);
    this.deployLog.info("Deployed: new requests go to this revision.");
    this.group = undefined;
  }

  private async existingBuild(): Promise<BuildRow | undefined> {
    if (!this.revision.build_key) return undefined;
    const found = await getBuild(this.context.deps.db, this.revision.build_key);
    if (found && existsSync(found.directory)) {
      this.build = found;
      this.buildLog.info(`Using build ${found.key} (revision ${found.revision_id}): nothing to fetch or install.`);
      return found;
    }
    return undefined;
  }

  private async move(to: RevisionStatus, message: string | null = null): Promise<void> {
    const { deps, claim, worker } = this.context;
    if (this.context.signal.aborted) throw new JobStopped("stopped");
    try {
      await deps.services.revisions.advance({ ...this.target(), to, message, now: deps.now().toISOString(), fence: { worker, attempt: claim.job_attempts } });
    } catch (error) {
      // Interrupted, deleted, or taken over meanwhile: nothing of ours to write any more.
      throw new JobStopped((error as Error).message);
    }
    this.status = to;
    (to === "DEPLOYING" || to === "DEPLOYED" ? this.deployLog : this.buildLog).info(`Status: ${to}.`);
  }

  private async fail(failure: StepFailure): Promise<void> {
    const to = canTransition(this.status, failure.status) ? failure.status : failureFor(this.status);
    this.log().error(failure.message);
    await this.move(to, failure.message).catch(() => undefined);
  }

  private log(): LogWriter {
    return this.status === "DEPLOYING" || this.status === "AWAITING_DEPLOY" ? this.deployLog : this.buildLog;
  }

  private logContext(log: LogWriter) {
    return { log, signal: this.context.signal };
  }

  private target() {
    return { workspaceId: this.revision.workspace_id, deploymentId: this.revision.deployment_id, revisionId: this.revision.id };
  }

  private recipe(): BuildRecipe {
    const config = this.revision.source_revision_config;
    return {
      configPath: config.langgraph_config_path ?? "langgraph.json",
      installCommand: this.revision.source_config.install_command ?? null,
      buildCommand: this.revision.source_config.build_command ?? null,
    };
  }

  /** The image an image source runs (external_docker, internal_docker). */
  private image(): string | undefined {
    const { revision } = this;
    if (revision.source !== "external_docker" && revision.source !== "internal_docker") return undefined;
    return revision.source_revision_config.image_uri ?? undefined;
  }

  private source(): RevisionSource {
    const { revision } = this;
    const config = revision.source_revision_config;
    if (revision.source === "internal_source") {
      return { kind: "tarball", workspaceId: revision.workspace_id, deploymentId: revision.deployment_id, objectPath: config.source_tarball_path ?? "" };
    }
    return {
      kind: "git",
      workspaceId: revision.workspace_id,
      deploymentId: revision.deployment_id,
      url: revision.source_config.repo_url ?? "",
      ref: config.repo_ref ?? "main",
      commit: config.repo_commit_sha ?? null,
      integrationId: revision.source_config.integration_id ?? null,
    };
  }
}

/** The failure status of the step a status belongs to. */
function failureFor(status: RevisionStatus): StepFailure["status"] {
  if (status === "CREATING") return "CREATE_FAILED";
  if (status === "AWAITING_BUILD" || status === "BUILDING") return "BUILD_FAILED";
  return "DEPLOY_FAILED";
}

function stepName(status: RevisionStatus): string {
  return status === "CREATING" ? "Fetching the source" : status === "AWAITING_BUILD" || status === "BUILDING" ? "Building" : "Deploying";
}

function describeSource(source: RevisionSource): string {
  return source.kind === "tarball" ? `uploaded source ${source.objectPath}` : `${source.url} at ${source.commit ?? source.ref}`;
}
