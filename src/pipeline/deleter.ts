import { rm } from "node:fs/promises";
import { packageCacheDir } from "./builder/builder.ts";
import { join } from "node:path";
import { prunePackageCache } from "./builder/prune.ts";
import { buildDirectories } from "./builder/repository.ts";
import type { PipelineDeps } from "./context.ts";
import type { DeploymentStorage } from "./runtime/deployment-storage.ts";
import type { DeploymentRuntime } from "./runtime/runtime.ts";
import type { DeploymentSleeper } from "./sleep/sleeper.ts";

/**
 * Finishes deletions: for each deployment marked AWAITING_DELETE, stops its processes,
 * drops its data (schema or embedded database), removes its builds and uploads, then
 * its rows. Woken when a deletion is announced; also looks at start-up and on every tick, so a
 * deletion cut short by a restart is finished by the next start.
 */
export class Deleter {
  private busy = false;
  private again = false;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly runtime: DeploymentRuntime,
    private readonly storage: DeploymentStorage,
    /** Deployments that sleep: a wake under way ends before the processes are stopped, and none follows. */
    private readonly sleeper?: Pick<DeploymentSleeper, "forget">,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.deps.services.deployments.onDeletion(() => this.poke());
    this.poke();
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }

  poke(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    void this.sweep()
      .catch((error) => this.deps.log.warn({ err: error }, "deleting a deployment failed; retrying on the next tick"))
      .finally(() => {
        this.busy = false;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  private async sweep(): Promise<void> {
    const { deployments } = this.deps.services;
    const deleting = await deployments.awaitingDeletion();
    for (const { id } of deleting) {
      await this.sleeper?.forget(id);
      await this.runtime.stopDeployment(id);
      await this.storage.remove(id);
      // Asynchronous: a build's node_modules takes seconds to remove, and the control plane serves meanwhile.
      for (const directory of await buildDirectories(this.deps.db, id)) await rm(directory, { recursive: true, force: true });
      await rm(join(this.deps.dataDir, "uploads", id), { recursive: true, force: true });
      if (this.deps.isolation?.sandboxed) await rm(packageCacheDir(this.deps, id), { recursive: true, force: true });
      await deployments.finishDeletion(id);
      this.deps.log.info({ deployment_id: id }, "deployment deleted");
    }
    // The shared cache's layers and environments of these builds; its downloads too once none is left.
    if (deleting.length > 0) await prunePackageCache(this.deps, null);
  }
}
