import { renameSync } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { PipelineDeps } from "../context.ts";
import { ownsSharedCache, packageCacheDir } from "./builder.ts";
import { pruneCache } from "./cache-prune.ts";
import { cacheUsers, deleteBuildsExcept, deploymentIds, lockForPruning, revisionBuilds } from "./repository.ts";
import { buildsToKeep, mayPrune } from "./retention.ts";
import { SOURCE_PREFIX } from "./stale-sources.ts";

/**
 * Applies the retention rule (retention.ts, docs/decisions/0051) to a deployment's builds
 * and then to the package cache they use. A pruning is scheduled each time a revision
 * starts serving, and runs once the revision it replaced has had the time to drain and
 * stop (its processes may still read their build until then); and for every deployment
 * at start.
 */
export class BuildPruner {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly deps: PipelineDeps) {}

  /** Prunes the deployment's builds once a replaced revision has stopped. */
  schedule(deploymentId: string): void {
    clearTimeout(this.timers.get(deploymentId));
    const { drainTimeoutMs, stopGraceMs } = this.deps.settings;
    const timer = setTimeout(
      () => {
        this.timers.delete(deploymentId);
        this.enqueue(deploymentId);
      },
      drainTimeoutMs + stopGraceMs + 5_000,
    );
    timer.unref();
    this.timers.set(deploymentId, timer);
  }

  /** One pruning at a time, in order; failures are logged (the next pruning tries again). */
  enqueue(deploymentId: string): Promise<void> {
    this.chain = this.chain.then(async () => {
      try {
        await pruneDeploymentBuilds(this.deps, deploymentId);
      } catch (error) {
        this.deps.log.warn({ err: error, deployment_id: deploymentId }, "removing old builds failed");
      }
    });
    return this.chain;
  }

  /** Every deployment's builds (at start: what an earlier version, or a crash, left). */
  async pruneAll(): Promise<void> {
    for (const id of await deploymentIds(this.deps.db)) await this.enqueue(id);
  }

  /** Cancels what is scheduled and waits for a pruning under way. */
  async stop(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.chain;
  }
}

/** The retention rule on one deployment, then on its package cache; returns the build directories removed. */
export async function pruneDeploymentBuilds(deps: PipelineDeps, deploymentId: string): Promise<string[]> {
  const removed = await deps.db.transaction(async (tx) => {
    const deployment = await lockForPruning(tx, deploymentId);
    if (!deployment) return [];
    const revisions = await revisionBuilds(tx, deploymentId);
    if (!mayPrune(revisions)) return [];
    return deleteBuildsExcept(tx, deploymentId, [...buildsToKeep(revisions, deployment.active_build_key, deps.settings.keepBuilds)]);
  });
  for (const directory of removed) await removeBuildDirectory(directory);
  if (removed.length > 0) deps.log.info({ deployment_id: deploymentId, builds: removed.map((d) => basename(d)) }, "old builds removed");
  await prunePackageCache(deps, deploymentId);
  return removed;
}

/**
 * The package cache of a deployment's builds: its own when sandboxed, else the shared
 * one, and that one only when it is Slipway's (in the data directory, not an operator's
 * SLIPWAY_PACKAGE_CACHE, which other control planes may share). With no deployment
 * left, its download caches go too.
 */
export async function prunePackageCache(deps: PipelineDeps, deploymentId: string | null): Promise<void> {
  const sandboxed = deps.isolation?.sandboxed === true;
  if (!sandboxed && !ownsSharedCache(deps)) return;
  if (sandboxed && deploymentId === null) return;
  const cacheDir = sandboxed ? packageCacheDir(deps, deploymentId!) : packageCacheDir(deps, "");
  const users = await cacheUsers(deps.db, sandboxed ? deploymentId : null);
  const noneLeft = !sandboxed && (await deploymentIds(deps.db)).length === 0;
  const limit = noneLeft ? 0 : deps.settings.packageCacheLimitMb * 1048576;
  const removed = await pruneCache(cacheDir, { users, downloadLimitBytes: limit });
  if (removed.length > 0) deps.log.info({ deployment_id: deploymentId, removed }, "package cache pruned");
}

/**
 * Renamed to a fetched-source name first, so that if this process stops before the
 * removal ends, the sweep at the next start (stale-sources.ts) finishes it.
 */
async function removeBuildDirectory(directory: string): Promise<void> {
  const aside = join(dirname(directory), `${SOURCE_PREFIX}removed-${basename(directory)}`);
  try {
    renameSync(directory, aside);
  } catch {
    return; // already gone (a deletion of the deployment removed it)
  }
  await rm(aside, { recursive: true, force: true });
}
