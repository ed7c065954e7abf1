import { existsSync, lstatSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { delimiter, dirname, join, sep } from "node:path";
import { localImportRoots } from "./python-project.ts";

/**
 * A build names its Python environment by a link `.venv` beside langgraph.json (where
 * `slipway agent` looks for one when SLIPWAY_PYTHON is not set): the link is what the
 * revision's agent processes read to find the environment and what to mount for it.
 */
export function linkPythonEnv(configFile: string, venv: string): boolean {
  const link = join(dirname(configFile), ".venv");
  let replaced = false;
  try {
    lstatSync(link);
    rmSync(link, { recursive: true, force: true });
    replaced = true;
  } catch {
    // none there
  }
  symlinkSync(venv, link);
  return replaced;
}

/** The build links an environment that is no longer there (its cache was cleared): the build cannot be reused. */
export function pythonEnvGone(configFile: string): boolean {
  const link = join(dirname(configFile), ".venv");
  try {
    return lstatSync(link).isSymbolicLink() && !existsSync(join(readlinkSync(link), "bin", "python"));
  } catch {
    return false;
  }
}

export interface RevisionPython {
  /** The environment's folder (the link's target). */
  venv: string;
  /** SLIPWAY_PYTHON (the environment's interpreter) and PYTHONPATH (the project's local dependencies). */
  env: Record<string, string>;
  /** The environment and the installation its interpreter comes from: to be seen read-only in a sandbox. */
  readOnly: string[];
}

const SYSTEM = ["/usr", "/bin", "/lib", "/lib64"];

/** What a built revision's processes need to run its Python graphs; undefined for a project without any. */
export function revisionPython(configFile: string): RevisionPython | undefined {
  const link = join(dirname(configFile), ".venv");
  let venv: string;
  try {
    if (!lstatSync(link).isSymbolicLink()) return undefined;
    venv = readlinkSync(link);
  } catch {
    return undefined;
  }
  if (!existsSync(join(venv, "bin", "python"))) return undefined;
  const readOnly = [venv];
  const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(join(venv, "pyvenv.cfg"), "utf8"))?.[1]?.trim();
  if (home) {
    const prefix = home.endsWith(`${sep}bin`) ? dirname(home) : home;
    if (!SYSTEM.some((dir) => prefix === dir || prefix.startsWith(`${dir}${sep}`))) readOnly.push(prefix);
  }
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(readFileSync(configFile, "utf8"));
  } catch {
    // read at build time already; nothing more to add here
  }
  const roots = localImportRoots(config, dirname(configFile));
  return { venv, env: { SLIPWAY_PYTHON: join(venv, "bin", "python"), ...(roots.length ? { PYTHONPATH: roots.join(delimiter) } : {}) }, readOnly };
}
