import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const FIXTURE = fileURLToPath(new URL("../fixtures/version-matrix/", import.meta.url));

/** One line of LangGraph.js, with the @langchain/core its peerDependencies ask for (the highest that fits). */
export interface VersionLine {
  langgraph: string;
  core: string;
}

/**
 * Where installed projects are kept between runs: outside the clone, so that a fresh
 * CI clone on the same machine reuses them. Keyed by the versions and the fixture's
 * package file, so a changed line installs anew.
 */
export function versionCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SLIPWAY_VERSION_MATRIX_CACHE) return env.SLIPWAY_VERSION_MATRIX_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "slipway-version-matrix");
}

function packageJson(line: VersionLine): Record<string, unknown> {
  return {
    name: `matrix-langgraph-${line.langgraph}`,
    private: true,
    type: "module",
    dependencies: { "@langchain/langgraph": line.langgraph, "@langchain/core": line.core },
  };
}

/**
 * A project on `line`: its node_modules installed once from the npm registry (into a
 * temporary directory renamed into place, so a run stopped half-way leaves nothing a
 * later run would trust), its sources copied fresh from the fixture every time.
 */
export async function versionProject(line: VersionLine, cacheRoot = versionCacheRoot()): Promise<string> {
  const manifest = packageJson(line);
  const key = createHash("sha256").update(JSON.stringify(manifest)).digest("hex").slice(0, 10);
  const root = join(cacheRoot, `langgraph-${line.langgraph}-core-${line.core}-${key}`);
  if (!existsSync(join(root, "node_modules", "@langchain", "langgraph", "package.json"))) {
    const partial = `${root}.${process.pid}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    writeFileSync(join(partial, "package.json"), JSON.stringify(manifest, null, 2));
    await run("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: partial, timeout: 600_000 });
    rmSync(root, { recursive: true, force: true });
    renameSync(partial, root);
  }
  rmSync(join(root, "src"), { recursive: true, force: true });
  rmSync(join(root, ".slipway"), { recursive: true, force: true });
  cpSync(join(FIXTURE, "src"), join(root, "src"), { recursive: true });
  cpSync(join(FIXTURE, "langgraph.json"), join(root, "langgraph.json"));
  cpSync(join(FIXTURE, "tsconfig.json"), join(root, "tsconfig.json"));
  return root;
}

/** The @langchain/langgraph version a project has installed. */
export function installedLanggraph(root: string): string {
  return JSON.parse(readFileSync(join(root, "node_modules", "@langchain", "langgraph", "package.json"), "utf8")).version;
}

/**
 * The lines the version matrix can run: the first and a late 0.2 before `withConfig`
 * returned a graph (0.2.41), the last 0.2, 0.3, 0.4, the first maintained 1.x and the
 * one Slipway itself ships. Each @langchain/core is the highest its peerDependencies allow.
 */
export const VERSION_LINES: VersionLine[] = [
  { langgraph: "0.2.0", core: "0.2.36" },
  { langgraph: "0.2.8", core: "0.3.80" },
  { langgraph: "0.2.74", core: "0.3.80" },
  { langgraph: "0.3.12", core: "0.3.80" },
  { langgraph: "0.4.10", core: "0.3.80" },
  { langgraph: "1.0.15", core: "1.4.0" },
  { langgraph: "1.7.3", core: "1.4.0" },
];

/** Whether `version` is at least `since` (plain x.y.z versions). */
function atLeast(version: string, since: string): boolean {
  const [a, b] = [version, since].map((v) => v.split(".").map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
}

/** interrupt() and Command arrived in 0.2.31; before them a graph paused before a node. */
export function hasCommand(langgraph: string): boolean {
  return atLeast(langgraph, "0.2.31");
}

/** What the library itself cannot do at this version (found in each release's own types). */
export function libraryGaps(langgraph: string): Partial<Record<"subgraph" | "messages-tuple", string>> {
  const gaps: Partial<Record<"subgraph" | "messages-tuple", string>> = {};
  if (!atLeast(langgraph, "0.2.9")) gaps.subgraph = "subgraphs are listed and streamed from 0.2.9 on";
  if (!atLeast(langgraph, "0.2.20")) gaps["messages-tuple"] = "the messages stream mode arrived in 0.2.20";
  return gaps;
}

/**
 * The lines a run takes: SLIPWAY_VERSION_MATRIX_ONLY=0.2.8,1.7.3 names them; under CI
 * (which must stay under 30 minutes) the oldest, a middle and the newest line, unless
 * SLIPWAY_VERSION_MATRIX_ALL=1; elsewhere every line.
 */
export function linesToRun(env: NodeJS.ProcessEnv = process.env): VersionLine[] {
  const only = env.SLIPWAY_VERSION_MATRIX_ONLY?.split(",");
  if (only) return VERSION_LINES.filter((line) => only.includes(line.langgraph));
  if (!env.CI || env.SLIPWAY_VERSION_MATRIX_ALL === "1") return VERSION_LINES;
  const middle = VERSION_LINES[Math.floor(VERSION_LINES.length / 2)]!;
  return [VERSION_LINES[0]!, middle, VERSION_LINES.at(-1)!];
}
