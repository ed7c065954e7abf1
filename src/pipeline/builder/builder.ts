import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { cp } from "node:fs/promises";
import { basename, delimiter, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildStepEnv, childEnv } from "../child-env.ts";
import type { PipelineDeps } from "../context.ts";
import { StepFailure, commandFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";
import type { ConfinedLaunch } from "../runtime/isolation.ts";
import { installLayerKey, restoreInstallLayer, saveInstallLayer } from "./install-layer.ts";
import { installAdvice, planInstall, resolveManager } from "./package-manager.ts";
import { inspectProject } from "./project.ts";
import { installPython, planPython } from "./python-build.ts";
import { warnImageKeys } from "./image-keys.ts";
import { pythonEnvGone, revisionPython } from "./python-link.ts";
import * as repo from "./repository.ts";
import { runCommand } from "./run-command.ts";
import { beginBuild } from "./underway.ts";

const SLIPWAY_BIN = fileURLToPath(new URL("../../../bin/slipway.js", import.meta.url));
/** Bumped when what a build directory holds changes shape: older builds are then not reused. */
const BUILD_FORMAT = 1;

export interface BuildRecipe {
  configPath: string;
  installCommand: string | null;
  buildCommand: string | null;
}

interface BuildTarget {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  /** Commit sha or tarball sha256: with the recipe, what identifies a build. */
  sourceId: string;
  recipe: BuildRecipe;
  /** Environment the graphs see when they are loaded to be checked (secrets, ...). */
  runtimeEnv: Record<string, string>;
  log: LogWriter;
  signal: AbortSignal;
}

function recipeHash(recipe: BuildRecipe): string {
  const node = process.versions.node.split(".")[0];
  return createHash("sha256")
    .update(JSON.stringify({ ...recipe, node, format: BUILD_FORMAT }))
    .digest("hex")
    .slice(0, 32);
}

/** A finished build of this source and recipe whose directory is still there. */
export async function reusableBuild(deps: PipelineDeps, target: Pick<BuildTarget, "deploymentId" | "sourceId" | "recipe">): Promise<repo.BuildRow | undefined> {
  const found = await repo.findBuild(deps.db, target.deploymentId, target.sourceId, recipeHash(target.recipe));
  return found && existsSync(found.directory) && !pythonEnvGone(found.config_file) ? found : undefined;
}

function sharedCacheDir(deps: PipelineDeps): string {
  return process.env.SLIPWAY_PACKAGE_CACHE || join(deps.dataDir, "cache");
}

/** The shared cache is Slipway's own (in the data directory), not one the operator named. */
export function ownsSharedCache(deps: PipelineDeps): boolean {
  return sharedCacheDir(deps) === join(deps.dataDir, "cache");
}

/**
 * Where a build keeps package downloads and install layers. Sandboxed, each deployment
 * has its own: a build is project code, and a cache it shares with other deployments'
 * builds is one it could poison for them (docs/decisions/0030).
 */
export function packageCacheDir(deps: PipelineDeps, deploymentId: string): string {
  return deps.isolation?.sandboxed ? join(sharedCacheDir(deps), "deployments", deploymentId) : sharedCacheDir(deps);
}

/**
 * A deployment's first sandboxed build starts from a copy of the shared cache (what the
 * operator, or an unsandboxed control plane, downloaded there): a copy, not links, so
 * that the build cannot change what the next deployment starts from.
 */
async function seedPackageCache(deps: PipelineDeps, cache: string): Promise<void> {
  if (!deps.isolation?.sandboxed || existsSync(cache)) return;
  const shared = sharedCacheDir(deps);
  for (const manager of ["npm", "yarn", "pnpm-store", "bun", "pip", "uv", "python-wheels"]) {
    if (existsSync(join(shared, manager))) await cp(join(shared, manager), join(cache, manager), { recursive: true, verbatimSymlinks: true });
  }
}

/** Runs the project's commands in the deployment's sandbox. */
function buildSandbox(deps: PipelineDeps, deploymentId: string, sourceDir: string, cache: string, readOnly: string[]): Confine {
  const { isolation } = deps;
  if (!isolation?.sandboxed) return undefined;
  return (argv, firstFd, cwd) =>
    isolation.confine({ deploymentId, kind: "build", argv, cwd, readOnly, writable: [sourceDir, cache], limits: BUILD_LIMITS, firstFd });
}

const BUILD_LIMITS = { memoryBytes: 4096 * 1048576, maxProcesses: 1024 };
type Confine = ((argv: string[], firstFd: number, cwd: string) => ConfinedLaunch) | undefined;

/**
 * Builds a fetched source tree (`sourceDir`, which becomes the build directory):
 * reads the project, installs its dependencies the way its lock file says (or with the
 * deployment's install_command), runs its build_command, and loads its graphs once with
 * `slipway agent --check`, so that a project that cannot start fails here with the reason.
 */
export async function buildSource(deps: PipelineDeps, target: BuildTarget, sourceDir: string): Promise<repo.BuildRow> {
  const end = beginBuild();
  try {
    return await buildIn(deps, target, sourceDir);
  } finally {
    end();
  }
}

async function buildIn(deps: PipelineDeps, target: BuildTarget, sourceDir: string): Promise<repo.BuildRow> {
  const { log, signal, recipe } = target;
  const project = inspectProject(sourceDir, recipe.configPath);
  const cache = packageCacheDir(deps, target.deploymentId);
  await seedPackageCache(deps, cache);
  mkdirSync(cache, { recursive: true });
  const env = buildStepEnv(cache, deps.settings.buildEnv, withNodeBin(process.env.PATH));
  warnImageKeys(project.config, log);
  const python = planPython(project.config, project.configFile, sourceDir, recipe.configPath, { ...process.env, PATH: env.PATH });
  const confine = buildSandbox(deps, target.deploymentId, sourceDir, cache, python?.readOnly ?? []);
  if (python) mkdirSync(join(cache, "python-envs"), { recursive: true });
  // What root wrote (the fetch, the seeded cache, a linked install layer) becomes the build's to write.
  const own = () => deps.isolation?.ownTrees(target.deploymentId, [sourceDir, cache]);
  await own();
  const installDirShown = relative(sourceDir, project.installDir) || ".";
  let installLayer: string | null = null;

  if (recipe.installCommand) {
    log.info(`Installing dependencies with the deployment's install_command in ${installDirShown}: ${recipe.installCommand}`);
    await shell("Installing dependencies", recipe.installCommand, project.installDir, env, target, confine);
  } else {
    const plan = planInstall(project.installDir);
    if (plan.manager === "none") {
      log.info(`${python ? "No JavaScript dependencies" : "Nothing to install"}: ${plan.reason} in ${installDirShown}.`);
    } else {
      // pnpm's store setting is one npm does not know, and warns about in every build log.
      if (plan.manager === "npm") delete env.npm_config_store_dir;
      const argv = resolveManager(plan, (program) => onPath(program, env.PATH));
      if (!argv) {
        throw new StepFailure(
          "BUILD_FAILED",
          `Installing dependencies failed: ${plan.reason}, but ${plan.argv[0]} is not installed on this machine. ` +
            `Install ${plan.argv[0]}, or set source_config.install_command.`,
        );
      }
      const layer = installLayerKey(plan, project.installDir, recipe.buildCommand);
      if (layer && (await restoreInstallLayer(cache, layer, project.installDir))) {
        installLayer = layer;
        log.info(
          `Installing dependencies: linked the tree that \`${argv.join(" ")}\` installed before for the same ${basename(plan.lockFile!)} and package.json (layer ${layer}).`,
        );
      } else {
        log.info(`Installing dependencies with \`${argv.join(" ")}\` (${plan.reason}) in ${installDirShown} (${project.installReason}).`);
        const outcome = await runCommand(argv[0], argv.slice(1), {
          cwd: project.installDir,
          env,
          output: (line) => log.info(line),
          signal,
          timeoutMs: 30 * 60_000,
          confine,
        });
        if (outcome.code !== 0)
          throw commandFailure("BUILD_FAILED", "Installing dependencies", argv.join(" "), outcome, log.tail(20), installAdvice(log.tail(100)));
        if (layer) {
          await saveInstallLayer(cache, layer, project.installDir);
          installLayer = layer;
        }
      }
    }
  }
  if (python) await installPython({ plan: python, configFile: project.configFile, sourceDir, cacheDir: cache, env, log, signal, confine });
  await own();
  if (recipe.buildCommand) {
    log.info(`Running the deployment's build_command in ${installDirShown}: ${recipe.buildCommand}`);
    await shell("Building", recipe.buildCommand, project.installDir, env, target, confine);
  }
  await checkGraphs(deps, target, project.configFile, sourceDir, confine);

  const key = createHash("sha256")
    .update(`${target.deploymentId}:${target.sourceId}:${recipeHash(recipe)}`)
    .digest("hex")
    .slice(0, 32);
  const directory = join(deps.dataDir, "builds", key);
  rmSync(directory, { recursive: true, force: true });
  renameSync(sourceDir, directory);
  const row: repo.BuildRow = {
    key,
    deployment_id: target.deploymentId,
    source_id: target.sourceId,
    recipe: recipeHash(recipe),
    directory,
    config_file: join(directory, relative(sourceDir, project.configFile)),
    revision_id: target.revisionId,
    install_layer: installLayer,
  };
  await repo.saveBuild(deps.db, { ...row, workspace_id: target.workspaceId, now: deps.now() });
  log.info(`Build ${key} is ready.`);
  return row;
}

/** The author's own command line (install_command, build_command), run as a Dockerfile's RUN would: by sh. */
async function shell(step: string, command: string, cwd: string, env: NodeJS.ProcessEnv, target: BuildTarget, confine: Confine): Promise<void> {
  const [program, flag] = process.platform === "win32" ? ["cmd.exe", "/c"] : ["/bin/sh", "-c"];
  const outcome = await runCommand(program, [flag, command], {
    cwd,
    env,
    output: (line) => target.log.info(line),
    signal: target.signal,
    timeoutMs: 30 * 60_000,
    confine,
  });
  if (outcome.code !== 0) throw commandFailure("BUILD_FAILED", step, command, outcome, target.log.tail(20));
}

/**
 * `slipway agent --check`: the agent server's own reading of langgraph.json (node_version,
 * keys it does not serve) and an import of every graph, with the deployment's secrets.
 * A check still running after checkTimeoutMs is left to the deploy's readiness check.
 */
async function checkGraphs(deps: PipelineDeps, target: BuildTarget, configFile: string, cwd: string, confine: Confine): Promise<void> {
  const { log, signal } = target;
  log.info("Checking the project: reading langgraph.json and loading every graph.");
  // Graph schemas are left to the deployed server's first request for them: extracting
  // them here would add seconds of the TypeScript compiler to every deploy (decision 0013).
  const env = childEnv({ ...target.runtimeEnv, ...revisionPython(configFile)?.env, SLIPWAY_LOG_LEVEL: "warn", SLIPWAY_CHECK_SCHEMAS: "0" });
  const outcome = await runCommand(process.execPath, [SLIPWAY_BIN, "agent", "--check", "--config", configFile], {
    cwd,
    env,
    output: (line, stream) => logCheckLine(log, projectRelative(line, cwd), stream),
    signal,
    timeoutMs: deps.settings.checkTimeoutMs,
    confine,
  });
  if (outcome.timedOut) {
    log.line("WARNING", `The graphs were still loading after ${Math.round(deps.settings.checkTimeoutMs / 1000)} s; the deploy's readiness check will tell.`);
    return;
  }
  if (outcome.code !== 0) {
    throw commandFailure(
      "BUILD_FAILED",
      "Checking the project",
      "slipway agent --check",
      outcome,
      log.tail(20),
      "The project cannot start as it is: fix what the lines below say.",
    );
  }
}

/**
 * The check's warnings (a missing env file, an older node_version) are the build log's
 * warnings. Its failure is said once, on stderr with the stack: the JSON summary line on
 * stdout, and stack frames inside Slipway itself, would only repeat it.
 */
function logCheckLine(log: LogWriter, line: string, stream: "stdout" | "stderr"): void {
  if (stream === "stdout" && line.startsWith('{"event":"check","ok":false')) return;
  if (SLIPWAY_FRAME.test(line)) return;
  if (stream === "stderr" && line.startsWith('{"level":"warn"')) {
    try {
      const { msg } = JSON.parse(line) as { msg?: unknown };
      if (typeof msg === "string") return void log.line("WARNING", msg);
    } catch {
      // not one of the check's own lines: shown as it is
    }
  }
  log.info(line);
}

/** A stack frame in Slipway's own files (its sources or its bundle), not the project's. */
const SLIPWAY_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SLIPWAY_FRAME = new RegExp(`^\\s+at .*\\(?${SLIPWAY_ROOT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(src|dist)/`);

/** Paths into the build's folder (.slipway/builds/.tmp-<id>/...) as the project's own: `src/agent.ts`. */
function projectRelative(line: string, buildDir: string): string {
  return line.split(`${buildDir.replace(/\/+$/, "")}/`).join("");
}

/** npm and corepack live beside the node binary; make sure children find them. */
function withNodeBin(path: string | undefined): string {
  const bin = join(process.execPath, "..");
  return path ? `${bin}${delimiter}${path}` : bin;
}

function onPath(program: string, path: string | undefined): boolean {
  const suffixes = process.platform === "win32" ? [".cmd", ".exe", ""] : [""];
  return (path ?? "").split(delimiter).some((dir) => dir && suffixes.some((suffix) => existsSync(join(dir, program + suffix))));
}
