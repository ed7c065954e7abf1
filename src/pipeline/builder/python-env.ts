import { randomBytes, createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { cp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { commandFailure, StepFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";
import type { ConfinedLaunch } from "../runtime/isolation.ts";
import type { Interpreter } from "./python-interpreter.ts";
import { DEPENDENCY_FILES, type PythonBuildConfig } from "./python-project.ts";
import { runCommand } from "./run-command.ts";

/** The worker shim shipped in this repository (python/): copied into every environment. */
const WORKER_PROJECT = fileURLToPath(new URL("../../../python/", import.meta.url));
/** Bumped when what an environment holds changes shape. */
const ENV_FORMAT = 1;
/** Written last into a finished environment: one without it was stopped half-way. */
const READY = ".slipway-ready";

type Confine = ((argv: string[], firstFd: number, cwd: string) => ConfinedLaunch) | undefined;

export interface PythonEnvRequest {
  /** The deployment's package cache: environments live in its python-envs/. */
  cacheDir: string;
  sourceDir: string;
  config: PythonBuildConfig;
  interpreter: Interpreter;
  /** The install steps' environment (package managers' settings and caches). */
  env: NodeJS.ProcessEnv;
  log: LogWriter;
  signal: AbortSignal;
  confine: Confine;
  /** Where a program is on the build's PATH, if it is. */
  which(program: string): string | undefined;
}

/**
 * The virtual environment of a revision: made once per key (interpreter, installer, the
 * dependency files, the worker shim) in the package cache and never changed after, so a
 * later revision with the same dependencies uses it as it is (docs/decisions/0036,
 * addendum). Returns its folder.
 */
export async function preparePythonEnv(request: PythonEnvRequest): Promise<string> {
  const { log, interpreter } = request;
  const installer = chooseInstaller(request);
  const key = pythonEnvKey(request, installer.name);
  const link = join(request.cacheDir, "python-envs", key);
  if (existsSync(join(link, READY))) {
    log.info(
      `Python environment: reusing the one installed before for the same Python ${interpreter.version}, dependencies and worker (environment ${key}); nothing to install.`,
    );
    return realpathSync(link);
  }
  // Built in a folder of its own and published by a link: a virtual environment is not
  // relocatable (pyvenv.cfg, scripts' #! lines), so it is made where it will stay.
  const dir = `${link}.${randomBytes(4).toString("hex")}`;
  await mkdir(join(request.cacheDir, "python-envs"), { recursive: true });
  try {
    await makeEnvironment(request, installer, dir);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  try {
    await rm(link, { force: true });
    await symlink(dir, link);
  } catch {
    // Another build published the same environment first: theirs is as good.
    if (!existsSync(join(link, READY))) throw new StepFailure("BUILD_FAILED", `Preparing the Python environment failed: could not publish ${link}.`);
    await rm(dir, { recursive: true, force: true });
  }
  log.info(`Python environment ${key} is ready.`);
  return realpathSync(link);
}

interface Installer {
  name: "pip" | "uv";
  venv(dir: string): string[];
  install(dir: string, args: string[]): string[];
}

function chooseInstaller(request: PythonEnvRequest): Installer {
  const { config, interpreter, log } = request;
  const uv = request.which("uv");
  if (config.installer === "uv" && !uv) {
    throw new StepFailure(
      "BUILD_FAILED",
      'Preparing the Python environment failed: pip_installer is "uv", but uv is not installed on this machine. Install uv, or set pip_installer to "pip" or "auto".',
    );
  }
  // uv does not read pip.conf: with a pip_config_file, "auto" keeps to pip, which does.
  const useUv = config.installer === "uv" || (config.installer === "auto" && uv !== undefined && !config.pipConfigFile);
  if (useUv && config.pipConfigFile)
    log.line(
      "WARNING",
      'pip_installer is "uv", which does not read pip_config_file: its settings do not apply (set UV_* settings for `slipway up`, or pip_installer "pip").',
    );
  if (useUv) {
    return {
      name: "uv",
      venv: (dir) => [uv!, "venv", "--quiet", "--python", interpreter.executable, dir],
      install: (dir, args) => [uv!, "pip", "install", "--python", join(dir, "bin", "python"), "--compile-bytecode", ...args],
    };
  }
  return {
    name: "pip",
    venv: (dir) => [interpreter.executable, "-m", "venv", dir],
    install: (dir, args) => [join(dir, "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", ...args],
  };
}

async function makeEnvironment(request: PythonEnvRequest, installer: Installer, dir: string): Promise<void> {
  const { config, log, interpreter, sourceDir } = request;
  const shown = (path: string) => relative(sourceDir, path) || ".";
  const args = [...workerRequirements(), ...config.requirements];
  for (const local of config.local) {
    if (local.kind === "package") args.push(local.dir);
    if (local.kind === "requirements") args.push("-r", join(local.dir, "requirements.txt"));
  }
  const wheels = join(request.cacheDir, "python-wheels");
  if (existsSync(wheels)) args.push("--find-links", wheels);
  const what = [
    ...config.local.map(
      (local) =>
        `${local.shown} (${local.kind === "package" ? "a package" : local.kind === "requirements" ? `${shown(join(local.dir, "requirements.txt"))}` : "code only"})`,
    ),
    ...config.requirements,
  ];
  log.info(
    `Preparing the Python environment with ${installer.name} on Python ${interpreter.version} (${interpreter.executable}): ${what.join(", ") || "no dependencies"}, and Slipway's worker.`,
  );
  const env = { ...request.env, ...(config.pipConfigFile ? { PIP_CONFIG_FILE: config.pipConfigFile } : {}) };
  await step(request, "Creating the Python environment", installer.venv(dir), env);
  await step(request, "Installing the Python dependencies", installer.install(dir, args), env, workerAdvice);
  await installWorker(dir, interpreter);
  await step(request, "Checking the Python environment", [join(dir, "bin", "python"), "-c", VERSIONS], env);
  await writeFile(join(dir, READY), `${new Date().toISOString()}\n`);
}

/** Prints what the environment runs, into the build log. */
const VERSIONS =
  "from importlib.metadata import version; import slipway_worker; " +
  "print('Python environment: langgraph ' + version('langgraph') + ', langchain-core ' + version('langchain-core') + ', slipway_worker ' + slipway_worker.WORKER_VERSION)";

async function step(
  request: PythonEnvRequest,
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  advice?: (output: string[]) => string | undefined,
): Promise<void> {
  const { log, signal, confine, sourceDir } = request;
  const outcome = await runCommand(argv[0], argv.slice(1), { cwd: sourceDir, env, output: (line) => log.info(line), signal, timeoutMs: 30 * 60_000, confine });
  if (outcome.code !== 0) throw commandFailure("BUILD_FAILED", name, argv.join(" "), outcome, log.tail(20), advice?.(log.tail(100)));
}

/** The shim's own package: pure Python, copied into site-packages (no build backend to fetch). */
async function installWorker(dir: string, interpreter: Interpreter): Promise<void> {
  const [major, minor] = interpreter.version.split(".");
  const target = join(dir, "lib", `python${major}.${minor}`, "site-packages", "slipway_worker");
  await cp(join(WORKER_PROJECT, "slipway_worker"), target, { recursive: true, filter: (source) => !source.includes("__pycache__") });
}

/** python/pyproject.toml's dependencies: the LangGraph lines the worker is tested with. */
export function workerRequirements(): string[] {
  const text = readFileSync(join(WORKER_PROJECT, "pyproject.toml"), "utf8");
  const list = /^dependencies\s*=\s*\[([^\]]*)\]/m.exec(text)?.[1] ?? "";
  return [...list.matchAll(/"([^"]+)"/g)].map((match) => match[1]);
}

/** When the resolver found the project's pins and the worker's at odds (pip's and uv's words for it). */
export function workerAdvice(output: string[]): string | undefined {
  const conflict = output.some((line) => /ResolutionImpossible|conflicting dependencies|No solution found|unsatisfiable/i.test(line));
  if (!conflict || !output.some((line) => /langgraph|langchain-core/.test(line))) return undefined;
  return `Slipway's Python worker needs ${workerRequirements().join(" and ")}: the project's own pins must allow them.`;
}

/** What decides an environment's content: the same key, the same environment. */
function pythonEnvKey(request: PythonEnvRequest, installer: string): string {
  const { config, interpreter, sourceDir } = request;
  const hash = createHash("sha256").update(
    JSON.stringify({
      format: ENV_FORMAT,
      python: interpreter.version,
      executable: interpreter.executable,
      installer,
      requirements: config.requirements,
      platform: process.platform,
      arch: process.arch,
    }),
  );
  for (const local of config.local) {
    hash.update(`\0local:${relative(sourceDir, local.dir)}:${local.kind}`);
    for (const file of DEPENDENCY_FILES) if (existsSync(join(local.dir, file))) hash.update(`\0${file}\0`).update(readFileSync(join(local.dir, file)));
  }
  if (config.pipConfigFile) hash.update("\0pip.conf\0").update(readFileSync(config.pipConfigFile));
  hash.update("\0worker\0").update(readFileSync(join(WORKER_PROJECT, "pyproject.toml")));
  for (const file of readdirSync(join(WORKER_PROJECT, "slipway_worker"))
    .filter((name) => name.endsWith(".py"))
    .sort()) {
    hash.update(`\0${file}\0`).update(readFileSync(join(WORKER_PROJECT, "slipway_worker", file)));
  }
  return hash.digest("hex").slice(0, 32);
}
