import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parse as parseYaml } from "yaml";
import { checkNodeVersion } from "../../config/node-version.ts";
import { StepFailure } from "../failure.ts";
import { isPythonGraphPath } from "./python-project.ts";

/**
 * What a fetched source tree holds, read before anything is installed, so that a broken
 * langgraph.json fails the build at once with a reason rather than after an install:
 * the config exists inside the tree and is JSON with graphs whose files exist, its
 * node_version does not ask for a later Node than the one that will run it, and where dependencies install (the
 * workspace root of a monorepo, else the project's own folder).
 */
interface Project {
  /** The langgraph.json, absolute. */
  configFile: string;
  /** Where the install runs. */
  installDir: string;
  /** Why there (for the build log). */
  installReason: string;
  /** The langgraph.json as read. */
  config: Record<string, unknown>;
}

const failed = (message: string) => new StepFailure("BUILD_FAILED", `Reading the project failed: ${message}`);

export function inspectProject(sourceDir: string, configPath: string, runningNode = process.versions.node): Project {
  const root = realpathSync(sourceDir);
  const configFile = resolve(root, configPath);
  if (!inside(root, configFile)) throw failed(`langgraph_config_path '${configPath}' leaves the source tree.`);
  if (!existsSync(configFile)) {
    const found = existsSync(join(root, "langgraph.json")) ? " The tree has one at its root: langgraph.json." : "";
    throw failed(`'${configPath}' does not exist in the source.${found} Set source_revision_config.langgraph_config_path to its path.`);
  }
  if (!inside(root, realpathSync(configFile))) throw failed(`'${configPath}' is a link that leaves the source tree.`);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(configFile, "utf8"));
  } catch (error) {
    throw failed(`${configPath} is not valid JSON: ${(error as Error).message}`);
  }
  if (!config || typeof config !== "object" || Array.isArray(config)) throw failed(`${configPath} must hold a JSON object.`);
  checkGraphFiles(config.graphs, dirname(configFile), configPath);
  // A warning (an older major runs) is told by the graph check, which reads the same rule.
  const node = checkNodeVersion(config.node_version, runningNode);
  if (node.error) throw failed(`${configPath}: node_version: ${node.error}.`);
  const { installDir, installReason } = findInstallDir(root, dirname(configFile));
  return { configFile, installDir, installReason, config };
}

function checkGraphFiles(graphs: unknown, configDir: string, configPath: string): void {
  if (!graphs || typeof graphs !== "object" || Array.isArray(graphs) || Object.keys(graphs).length === 0) {
    throw failed(`${configPath}: "graphs" must be an object naming at least one graph, e.g. {"agent": "./src/agent.ts:graph"}.`);
  }
  for (const [id, spec] of Object.entries(graphs as Record<string, unknown>)) {
    const path = typeof spec === "string" ? spec : (spec as { path?: unknown } | null)?.path;
    if (typeof path !== "string") throw failed(`${configPath}: graphs.${id} must be "path:export" or {"path": ...}.`);
    const file = path.replace(/:[A-Za-z_$][\w$]*$/, "");
    // `package.module:graph` is found by Python's import system: the graph check tells.
    if (isPythonGraphPath(file) && !file.endsWith(".py")) continue;
    const absolute = resolve(configDir, file);
    if (!existsSync(absolute) || !statSync(absolute).isFile()) {
      throw failed(`${configPath}: graphs.${id} points at ${file}, which does not exist in the source.`);
    }
  }
}

/** The workspace root whose globs include the project's folder, else the nearest folder with package.json. */
function findInstallDir(root: string, projectDir: string): { installDir: string; installReason: string } {
  let nearest: string | undefined;
  for (let dir = projectDir; inside(root, dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) nearest ??= dir;
    if (dir !== projectDir || existsSync(join(dir, "pnpm-workspace.yaml"))) {
      const globs = workspaceGlobs(dir);
      const rel = relative(dir, projectDir).split(sep).join("/");
      if (globs.some((glob) => globMatches(glob, rel === "" ? "." : rel))) {
        return { installDir: dir, installReason: `workspace root ${relative(root, dir) || "."} lists ${rel}` };
      }
    }
    if (dir === root) break;
  }
  const installDir = nearest ?? projectDir;
  return { installDir, installReason: nearest ? `package.json in ${relative(root, nearest) || "."}` : "no package.json" };
}

function workspaceGlobs(dir: string): string[] {
  const globs: string[] = [];
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { workspaces?: unknown };
    const ws = manifest.workspaces;
    const list = Array.isArray(ws) ? ws : (ws as { packages?: unknown } | undefined)?.packages;
    if (Array.isArray(list)) globs.push(...list.filter((g): g is string => typeof g === "string"));
  } catch {
    // no package.json, or not JSON: no npm/yarn workspaces here
  }
  try {
    const pnpm = parseYaml(readFileSync(join(dir, "pnpm-workspace.yaml"), "utf8")) as { packages?: unknown } | null;
    if (Array.isArray(pnpm?.packages)) globs.push(...pnpm.packages.filter((g): g is string => typeof g === "string"));
  } catch {
    // none
  }
  return globs.filter((glob) => !glob.startsWith("!"));
}

/** Workspace globs: `*` within a folder name, `**` across folders. */
export function globMatches(glob: string, path: string): boolean {
  const clean = glob.replace(/^\.\//, "").replace(/\/+$/, "");
  const pattern = clean
    .split("/")
    .map((part) =>
      part === "**"
        ? ".*"
        : part
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*/g, "[^/]*")
            .replace(/\?/g, "[^/]"),
    )
    .join("/");
  return new RegExp(`^${pattern}$`).test(path);
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
