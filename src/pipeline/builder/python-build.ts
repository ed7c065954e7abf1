import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join, relative } from "node:path";
import type { LogWriter } from "../log-writer.ts";
import type { ConfinedLaunch } from "../runtime/isolation.ts";
import { preparePythonEnv } from "./python-env.ts";
import { findInterpreter, type Interpreter } from "./python-interpreter.ts";
import { linkPythonEnv } from "./python-link.ts";
import { needsPython, readPythonBuild, type PythonBuildConfig } from "./python-project.ts";

/** A project's Python side, read and its interpreter found before anything installs. */
export interface PythonPlan {
  config: PythonBuildConfig;
  interpreter: Interpreter;
  /** Folders outside the source and cache that its steps must see read-only (the interpreter's installation, uv's folder). */
  readOnly: string[];
}

/**
 * Undefined for a project without Python graphs or a Python auth.path. Fails the build (BUILD_FAILED) on a
 * wrong Python key or a python_version this machine does not have, before the installs.
 */
export function planPython(
  config: Record<string, unknown>,
  configFile: string,
  sourceDir: string,
  configPath: string,
  env: NodeJS.ProcessEnv,
): PythonPlan | undefined {
  if (!needsPython(config)) return undefined;
  const python = readPythonBuild(config, dirname(configFile), realpathSync(sourceDir), configPath);
  const interpreter = findInterpreter(python.pythonVersion, env);
  const readOnly = [interpreter.prefix];
  const uv = which("uv", env.PATH);
  if (uv) readOnly.push(dirname(realpathSync(uv)));
  return { config: python, interpreter, readOnly };
}

interface PythonInstall {
  plan: PythonPlan;
  configFile: string;
  sourceDir: string;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  log: LogWriter;
  signal: AbortSignal;
  confine: ((argv: string[], firstFd: number, cwd: string) => ConfinedLaunch) | undefined;
}

/** Prepares (or reuses) the revision's environment and links it beside langgraph.json. */
export async function installPython(install: PythonInstall): Promise<void> {
  const { plan, log } = install;
  const venv = await preparePythonEnv({
    cacheDir: install.cacheDir,
    sourceDir: install.sourceDir,
    config: plan.config,
    interpreter: plan.interpreter,
    env: install.env,
    log,
    signal: install.signal,
    confine: install.confine,
    which: (program) => which(program, install.env.PATH),
  });
  if (linkPythonEnv(install.configFile, venv)) {
    const shown = relative(install.sourceDir, join(dirname(install.configFile), ".venv"));
    log.line("WARNING", `The source holds ${shown}; the build's environment replaces it (a virtual environment does not move between machines).`);
  }
}

function which(program: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, program))) return join(dir, program);
  }
  return undefined;
}
