import type { PipelineDeps } from "./context.ts";
import { BuildPruner } from "./builder/prune.ts";
import { removeStaleSources } from "./builder/stale-sources.ts";
import { Deleter } from "./deleter.ts";
import { JobRunner } from "./jobs/runner.ts";
import { restoreDeployments, UnservedRevisions } from "./restore.ts";
import { DockerRuntime } from "./runtime/docker/docker-runtime.ts";
import { DeploymentStorage } from "./runtime/deployment-storage.ts";
import { Isolation } from "./runtime/isolation.ts";
import { LocalRuntime } from "./runtime/local-runtime.ts";
import type { DeploymentRuntime } from "./runtime/runtime.ts";
import { DeploymentSleeper } from "./sleep/sleeper.ts";

export type { PipelineDeps } from "./context.ts";

/** The running pipeline: what the router asks, and how to stop it. */
interface Pipeline {
  runtime: DeploymentRuntime;
  runner: JobRunner;
  /** Starts a sleeping deployment (the router holds a request for it); false when it does not sleep. */
  wake(deploymentId: string): boolean;
  /** Why a deployment with an active revision cannot be served (its build is gone), if so. */
  unserved(deploymentId: string): string | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the revision pipeline of a control plane: serves again what was deployed,
 * finishes deletions left pending, and claims revision jobs (durable, leased).
 */
export async function startPipeline(given: PipelineDeps): Promise<Pipeline> {
  const isolation = given.isolation ?? Isolation.probe();
  const deps = { ...given, isolation };
  const storage = new DeploymentStorage(deps, isolation);
  const runtime = deps.docker ? new DockerRuntime(deps, storage, deps.docker) : new LocalRuntime(deps, storage, isolation);
  // Sleeping needs an agent that can say what keeps it awake: local processes only (docs/decisions/0039).
  const unserved = new UnservedRevisions();
  runtime.onPromote((group) => unserved.clear(group.deploymentId));
  const sleeper = deps.docker ? undefined : new DeploymentSleeper(deps, runtime, unserved);
  const deleter = new Deleter(deps, runtime, storage, sleeper);
  const runner = new JobRunner(deps, runtime);
  removeStaleSources(deps.dataDir);
  await restoreDeployments(deps, runtime, unserved);
  // Old builds go once the revision that replaced them has served a while (docs/decisions/0051).
  const pruner = new BuildPruner(deps);
  runtime.onPromote((group) => pruner.schedule(group.deploymentId));
  void pruner.pruneAll();
  await runtime.tidy().catch((error: Error) => deps.log.warn({ err: error }, "removing what a previous control plane left failed"));
  await sleeper?.start();
  await deleter.start();
  await runner.start();
  const sweep = setInterval(() => deleter.poke(), 5_000);
  sweep.unref();
  let stopped: Promise<void> | undefined;
  return {
    runtime,
    runner,
    wake: (deploymentId) => sleeper?.wake(deploymentId) ?? false,
    unserved: (deploymentId) => unserved.why(deploymentId),
    stop() {
      stopped ??= (async () => {
        clearInterval(sweep);
        await sleeper?.stop();
        await runner.stop();
        await deleter.stop();
        await pruner.stop();
        await runtime.close();
        await storage.close();
      })();
      return stopped;
    },
  };
}
