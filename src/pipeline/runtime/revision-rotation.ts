import type { PipelineDeps } from "../context.ts";
import type { DeploymentStorage } from "./deployment-storage.ts";
import type { RevisionGroup } from "./revision-group.ts";
import type { DeploymentRuntime, LaunchSpec } from "./runtime.ts";

interface Serving {
  workspaceId: string;
  active?: RevisionGroup;
}

/**
 * What every runtime does the same way once it can start a revision's replicas: says
 * which group serves each deployment now (the router asks `target`); launches a new
 * revision beside the serving one; `promote` switches new requests to it at once and
 * retires the previous one: it stops claiming runs, keeps its requests (streams of long
 * runs included) up to the drain timeout, then is asked to stop, gets a grace, and is killed.
 */
export abstract class RevisionRotation implements DeploymentRuntime {
  private readonly serving = new Map<string, Serving>();
  private readonly retiring = new Set<Promise<void>>();
  protected readonly launched = new Set<RevisionGroup>();
  private readonly promoted = new Set<(group: RevisionGroup) => void>();

  constructor(
    protected readonly deps: PipelineDeps,
    protected readonly storage: DeploymentStorage,
  ) {}

  /** Starts a revision's replicas without waiting: a restart serves what was DEPLOYED as soon as it listens. */
  abstract start(spec: LaunchSpec): Promise<RevisionGroup>;

  /**
   * Starts a revision's replicas and waits until all answer /ok (or DEPLOY_FAILED). The
   * deployment's storage opens with the first revision that has something to serve, and
   * is let go again when that revision fails with nothing else serving: an embedded
   * database holds about 200 MB, and a deployment whose revisions fail must hold none.
   */
  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<RevisionGroup> {
    let group: RevisionGroup | undefined;
    try {
      group = await this.start(spec);
      await group.ready(this.deps.settings.readinessTimeoutMs, signal);
    } catch (error) {
      if (group) await this.stopGroup(group);
      await this.releaseStorageIfIdle(spec.deploymentId);
      throw error;
    }
    return group;
  }

  /** Sends new requests to `group` from now on; the group it replaces is retired. */
  promote(workspaceId: string, group: RevisionGroup): void {
    const serving = this.serving.get(group.deploymentId) ?? { workspaceId };
    const previous = serving.active;
    serving.active = group;
    this.serving.set(group.deploymentId, serving);
    if (previous && previous !== group) this.retire(previous);
    for (const listener of this.promoted) listener(group);
  }

  /** Calls `listener` each time a group starts serving its deployment (a deploy, a restore, a wake). */
  onPromote(listener: (group: RevisionGroup) => void): void {
    this.promoted.add(listener);
  }

  /**
   * Stops what serves a deployment, and closes its embedded database (the files stay),
   * only if that group is all that runs of it: not while a new revision starts or an old
   * one drains. From the call on, `target` answers undefined. Answers whether it slept.
   */
  async sleep(deploymentId: string): Promise<boolean> {
    const serving = this.serving.get(deploymentId);
    const group = serving?.active;
    if (!group || [...this.launched].some((other) => other.deploymentId === deploymentId && other !== group)) return false;
    serving.active = undefined;
    await this.stopGroup(group);
    await this.releaseStorageIfIdle(deploymentId);
    return true;
  }

  /** What serves a deployment now, if anything. */
  target(deploymentId: string): RevisionGroup | undefined {
    return this.serving.get(deploymentId)?.active;
  }

  /** Stops every replica of a deployment (it is being deleted). */
  async stopDeployment(deploymentId: string): Promise<void> {
    const serving = this.serving.get(deploymentId);
    this.serving.delete(deploymentId);
    const groups = [...this.launched].filter((g) => g.deploymentId === deploymentId);
    if (serving?.active && !groups.includes(serving.active)) groups.push(serving.active);
    await Promise.all(groups.map((g) => this.stopGroup(g)));
  }

  /** After the restore at start: removes what a previous control plane left and nothing serves (containers). */
  async tidy(): Promise<void> {}

  /** Stops everything (the control plane shuts down). */
  async close(): Promise<void> {
    const groups = [...this.launched];
    this.serving.clear();
    await Promise.all(groups.map((g) => this.stopGroup(g)));
    await Promise.all([...this.retiring]);
  }

  /** Stops a group that never served (a revision that failed or was interrupted while starting). */
  async stopGroup(group: RevisionGroup): Promise<void> {
    this.launched.delete(group);
    await group.stop(this.deps.settings.stopGraceMs);
  }

  private retire(group: RevisionGroup): void {
    const { drainTimeoutMs } = this.deps.settings;
    group.log.info(`Revision replaced: draining (no new runs; requests in flight may take up to ${Math.round(drainTimeoutMs / 1000)} s).`);
    group.drain();
    const done = (async () => {
      const idle = await group.idle(drainTimeoutMs);
      if (!idle) group.log.line("WARNING", `${group.inFlight} request(s) still open after the drain timeout; stopping anyway.`);
      await this.stopGroup(group);
      // Its database credential, if a rotation replaced it, opens nothing from now on.
      await this.storage
        .retired(group.deploymentId)
        .catch((error: Error) => group.log.error(`Retiring the replaced database credential failed: ${error.message}`));
      await group.log.flush();
    })();
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
  }

  /** Closes the deployment's storage when no replica of it runs or starts (its data stays). */
  private async releaseStorageIfIdle(deploymentId: string): Promise<void> {
    if (this.serving.get(deploymentId)?.active) return;
    if ([...this.launched].some((g) => g.deploymentId === deploymentId)) return;
    await this.storage.release(deploymentId);
  }
}
