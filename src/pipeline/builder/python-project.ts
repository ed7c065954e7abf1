import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { StepFailure } from "../failure.ts";

/**
 * What langgraph.json asks of a Python build, read as the vendor's CLI reads it:
 * - `dependencies`: "." and other local folders (a folder with pyproject.toml or setup.py
 *   is a package, installed with its dependencies; one with only requirements.txt has
 *   that file installed; either way the folder is importable), and requirement
 *   specifiers ("langchain-openai>=0.3") installed as they are;
 * - `python_version` ("3.11", "3.12", ...), `pip_installer` ("auto" | "pip" | "uv"),
 *   `pip_config_file` (a pip.conf inside the project).
 */
export interface PythonBuildConfig {
  /** "3.11"; undefined: the machine's python3.11, else its python3. */
  pythonVersion?: string;
  installer: "auto" | "pip" | "uv";
  /** Absolute path of pip_config_file. */
  pipConfigFile?: string;
  /** Requirement specifiers, in the order given. */
  requirements: string[];
  local: LocalDependency[];
}

export interface LocalDependency {
  /** Absolute folder. */
  dir: string;
  /** As written in langgraph.json, for the build log. */
  shown: string;
  /** "package": pyproject.toml or setup.py; "requirements": only requirements.txt; "code": neither. */
  kind: "package" | "requirements" | "code";
}

/** Files whose content decides what an install of a local folder produces (the environment's key). */
export const DEPENDENCY_FILES = ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"];

const PYTHON_MODULE = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;
const JS_FILE = /\.(m|c)?(j|t)sx?$/;

/** A graph path that the Python worker serves: `./agent.py` or `package.module`. */
export function isPythonGraphPath(path: string): boolean {
  return path.endsWith(".py") || (PYTHON_MODULE.test(path) && !JS_FILE.test(path));
}

/** Whether any graph of langgraph.json is a Python one. */
export function namesPythonGraphs(graphs: unknown): boolean {
  if (!graphs || typeof graphs !== "object") return false;
  return Object.values(graphs as Record<string, unknown>).some((spec) => {
    const path = typeof spec === "string" ? spec : (spec as { path?: unknown } | null)?.path;
    return typeof path === "string" && isPythonGraphPath(path.replace(/:[A-Za-z_$][\w$]*$/, ""));
  });
}

/** Whether `section[key]` of langgraph.json names a Python file: `auth.path` (a `langgraph_sdk.Auth`) or `http.app` (an ASGI app), run by the worker. */
function namesPythonModule(section: unknown, key: "path" | "app"): boolean {
  const spec = section && typeof section === "object" ? (section as Record<string, unknown>)[key] : undefined;
  return typeof spec === "string" && spec.replace(/:[A-Za-z_$][\w$]*$/, "").endsWith(".py");
}

/** Whether the project has Python code for the worker to run: a graph, or only its auth or app (a JS project may have those). */
export function needsPython(config: Record<string, unknown>): boolean {
  return namesPythonGraphs(config.graphs) || namesPythonModule(config.auth, "path") || namesPythonModule(config.http, "app");
}

const failed = (configPath: string, message: string) => new StepFailure("BUILD_FAILED", `Reading the project failed: ${configPath}: ${message}`);

/** Reads and checks the Python keys; every mistake is a BUILD_FAILED naming the key. */
export function readPythonBuild(config: Record<string, unknown>, configDir: string, sourceRoot: string, configPath: string): PythonBuildConfig {
  const version = config.python_version;
  if (version !== undefined && (typeof version !== "string" || !/^3\.\d{1,2}$/.test(version))) {
    throw failed(configPath, `python_version must be a string such as "3.11", not ${JSON.stringify(version)}.`);
  }
  const installer = config.pip_installer ?? "auto";
  if (installer !== "auto" && installer !== "pip" && installer !== "uv") {
    throw failed(configPath, `pip_installer must be "auto", "pip" or "uv", not ${JSON.stringify(installer)}.`);
  }
  let pipConfigFile: string | undefined;
  if (config.pip_config_file !== undefined) {
    if (typeof config.pip_config_file !== "string") throw failed(configPath, "pip_config_file must be a path to a file in the project.");
    pipConfigFile = resolve(configDir, config.pip_config_file);
    if (!existsSync(pipConfigFile) || !statSync(pipConfigFile).isFile() || !inside(sourceRoot, realpathSync(pipConfigFile))) {
      throw failed(configPath, `pip_config_file ${JSON.stringify(config.pip_config_file)} is not a file inside the project.`);
    }
  }
  const dependencies = config.dependencies ?? [];
  if (!Array.isArray(dependencies)) throw failed(configPath, `dependencies must be a list, such as [".", "langchain-openai"].`);
  const requirements: string[] = [];
  const local: LocalDependency[] = [];
  dependencies.forEach((entry, index) => {
    if (typeof entry !== "string" || !entry.trim()) throw failed(configPath, `dependencies[${index}] must be a non-empty string.`);
    const dependency = entry.trim();
    if (dependency.startsWith(".") || dependency.startsWith("/")) {
      local.push(readLocal(dependency, configDir, sourceRoot, configPath, index));
    } else if (dependency.startsWith("-")) {
      // An option would reach pip's command line: an index or a file of the build's choosing.
      throw failed(
        configPath,
        `dependencies[${index}] ${JSON.stringify(dependency)} is an installer option; put index and install settings in pip_config_file.`,
      );
    } else {
      requirements.push(dependency);
    }
  });
  return { pythonVersion: version, installer, pipConfigFile, requirements, local };
}

function readLocal(dependency: string, configDir: string, sourceRoot: string, configPath: string, index: number): LocalDependency {
  const dir = resolve(configDir, dependency);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw failed(configPath, `dependencies[${index}] ${JSON.stringify(dependency)} is not a folder of the project.`);
  if (!inside(sourceRoot, realpathSync(dir))) throw failed(configPath, `dependencies[${index}] ${JSON.stringify(dependency)} leaves the source tree.`);
  const has = (file: string) => existsSync(join(dir, file));
  const kind = has("pyproject.toml") || has("setup.py") ? "package" : has("requirements.txt") ? "requirements" : "code";
  return { dir, shown: dependency, kind };
}

/**
 * The folders a local dependency makes importable from the revision's own files (its
 * `src/` first, for a src layout): put ahead of the environment's site-packages, so that
 * a package installed into a cached environment by an earlier revision runs this
 * revision's code.
 */
export function localImportRoots(config: Record<string, unknown>, configDir: string): string[] {
  const dependencies = Array.isArray(config.dependencies) ? config.dependencies : [];
  const roots: string[] = [];
  for (const entry of dependencies) {
    if (typeof entry !== "string" || !(entry.trim().startsWith(".") || entry.trim().startsWith("/"))) continue;
    const dir = resolve(configDir, entry.trim());
    const src = join(dir, "src");
    if (existsSync(src) && statSync(src).isDirectory()) roots.push(src);
    roots.push(dir);
  }
  return [...new Set(roots)];
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
