// `npm run try-projects -- <project>...`: deploys public LangGraph projects (JS or Python) unchanged,
// by upload (`slipway deploy <dir>`) and through a git server on loopback
// (`slipway deploy --repo`), runs one thread and run on each through the official SDK
// against a model stand-in on loopback, and prints a table. It installs the projects'
// dependencies from the npm registry, so it runs outside CI.
//
// A <project> is a directory, or a git directory (bare clone) whose HEAD is taken; add
// `#path/to/langgraph.json` when the config is not at the root. Options: --keep (leave
// the temporary directory), --only-upload, --only-git.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { inspectProject } from "../src/pipeline/builder/project.ts";
import { planInstall } from "../src/pipeline/builder/package-manager.ts";
import { startControlPlane, type ControlPlaneProcess } from "../test/support/control-plane-process.ts";
import { startGitDaemon, TestRepository } from "../test/support/git-server.ts";
import { startModelStandIn, type ModelStandIn } from "./try-projects/model-stand-in.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DEPLOY_TIMEOUT_S = 1200;

interface Project {
  name: string;
  dir: string;
  config: string;
  manager: string;
  layout: string;
  graph: string;
}

interface Outcome {
  deployed: boolean;
  ran: boolean;
  /** Requests the model stand-in answered during the run. */
  calls?: number;
  error?: string;
}

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith("--")));
const sources = args.filter((a) => !a.startsWith("--"));
if (sources.length === 0) {
  console.error("usage: npm run try-projects -- [--keep] [--only-upload|--only-git] <dir or git dir>[#langgraph.json path]...");
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "slipway-try-"));
const say = (text: string) => process.stderr.write(`try-projects: ${text}\n`);

/** The project's files as they are committed (a git dir's HEAD), or a copy of the directory without node_modules and .git. */
function materialise(source: string): Project {
  const [path, configPath = "langgraph.json"] = source.split("#");
  const from = resolve(path);
  const isGitDir = existsSync(join(from, "HEAD")) && existsSync(join(from, "objects"));
  const raw = isGitDir ? (basename(from) === "repo" || basename(from) === ".git" ? basename(dirname(from)) : basename(from)) : basename(from);
  const name =
    raw
      .replace(/^.*\+/, "")
      .replace(/\.git$/, "")
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-") + (configPath === "langgraph.json" ? "" : `-${basename(dirname(configPath)) || "sub"}`);
  const dir = join(work, "projects", name);
  mkdirSync(dir, { recursive: true });
  if (isGitDir) {
    exportHead(from, dir);
  } else {
    cpSync(from, dir, { recursive: true, filter: (file) => !/(^|\/)(node_modules|\.git)(\/|$)/.test(relative(from, file)) });
  }
  const facts = inspectProject(dir, configPath);
  const plan = planInstall(facts.installDir);
  const manifest = existsSync(join(facts.installDir, "package.json")) ? JSON.parse(readFileSync(join(facts.installDir, "package.json"), "utf8")) : {};
  const workspace =
    facts.installDir !== dirname(facts.configFile) || manifest.workspaces !== undefined || existsSync(join(facts.installDir, "pnpm-workspace.yaml"));
  const config = JSON.parse(readFileSync(facts.configFile, "utf8"));
  const specs = Object.values(config.graphs as Record<string, string | { path: string }>).map((spec) => (typeof spec === "string" ? spec : spec.path));
  const python = specs.some((spec) => spec.split(":")[0].endsWith(".py") || !spec.startsWith("."));
  const javascript = specs.some((spec) => /\.(c|m)?(j|t)sx?$/.test(spec.split(":")[0]));
  return {
    name,
    dir,
    config: configPath,
    manager: [
      javascript ? plan.manager + (plan.pinned ? ` (${plan.pinned.split("+")[0]})` : "") : "",
      python ? `Python, ${config.pip_installer ?? "auto"}` : "",
    ]
      .filter(Boolean)
      .join(" + "),
    layout: javascript ? `${workspace ? "workspace" : "single"}, ${manifest.type === "module" ? "ESM" : "CJS"}` : "Python",
    graph: Object.keys(config.graphs)[0],
  };
}

/**
 * Writes the files of HEAD of a git dir. A partial mirror may lack some large blobs
 * (images, data files): those are left out and named, the rest is as committed.
 */
function exportHead(gitDir: string, dir: string): void {
  const entries = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "-z", "HEAD"], { maxBuffer: 1 << 28 })
    .toString("utf8")
    .split("\0")
    .filter(Boolean);
  const missing: string[] = [];
  for (const entry of entries) {
    const [meta, path] = entry.split("\t");
    const [mode, type, sha] = meta.split(" ");
    if (type !== "blob") continue;
    let content: Buffer;
    try {
      content = execFileSync("git", ["--git-dir", gitDir, "cat-file", "blob", sha], { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      missing.push(path);
      continue;
    }
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    if (mode === "120000") symlinkSync(content.toString("utf8"), target);
    else writeFileSync(target, content, { mode: mode === "100755" ? 0o755 : 0o644 });
  }
  if (missing.length > 0) say(`${gitDir}: ${missing.length} file(s) absent from the mirror, left out: ${missing.slice(0, 5).join(", ")}`);
}

function secretArgs(model: ModelStandIn): string[] {
  const secrets = {
    OPENAI_API_KEY: "sk-stand-in-0000",
    OPENAI_BASE_URL: `${model.url}/v1`,
    ANTHROPIC_API_KEY: "sk-ant-stand-in-0000",
    ANTHROPIC_BASE_URL: model.url,
    TAVILY_API_KEY: "tvly-stand-in-0000",
    LANGSMITH_TRACING: "false",
  };
  return Object.entries(secrets).flatMap(([name, value]) => ["--secret", `${name}=${value}`]);
}

/** `slipway deploy ... --json`: the deployment's URL, or the revision's status_message. */
async function deploy(cp: ControlPlaneProcess, deployArgs: string[]): Promise<{ url?: string; error?: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin/slipway.js"), "deploy", "--json", "--timeout", String(DEPLOY_TIMEOUT_S), ...deployArgs], {
    env: { ...process.env, SLIPWAY_URL: cp.url, SLIPWAY_API_KEY: cp.apiKey, SLIPWAY_TENANT_ID: cp.workspaceId },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((done) => child.once("close", done));
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const revision = events.find((e) => e.revision_id);
  if (code === 0 && revision) return { url: String(revision.url) };
  if (revision) {
    const response = await fetch(`${cp.url}/v2/deployments/${revision.deployment_id}/revisions/${revision.revision_id}`, {
      headers: { "x-api-key": cp.apiKey!, "x-tenant-id": cp.workspaceId! },
    });
    const body = (await response.json()) as { status?: string; status_message?: string };
    return { error: `${body.status}: ${body.status_message ?? stderr.trim()}` };
  }
  return { error: (stderr.trim() || stdout.trim()).split("\n").slice(-3).join(" ") };
}

/** One thread, one run through the SDK: it must end in success; says how many model calls the stand-in answered. */
async function runOnce(cp: ControlPlaneProcess, url: string, project: Project, model: ModelStandIn): Promise<Outcome> {
  const client = new Client({ apiUrl: url, apiKey: cp.apiKey, defaultHeaders: { "x-tenant-id": cp.workspaceId! } });
  const before = model.requests.length;
  try {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, project.graph, {
      input: { messages: [{ role: "user", content: [{ type: "text", text: "What is LangGraph? Use a tool if you have one." }] }] },
      config: { recursion_limit: 15 },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const done = await client.runs.get(thread.thread_id, run.run_id);
    const calls = model.requests.length - before;
    if (done.status === "success") return { deployed: true, ran: true, calls };
    const state = await client.threads.get(thread.thread_id);
    const error = (state as { error?: unknown }).error ?? (await client.threads.getState(thread.thread_id)).tasks.find((t) => t.error)?.error;
    const told = typeof error === "string" ? error : JSON.stringify(error);
    return { deployed: true, ran: false, calls, error: `run ${done.status}${error ? `: ${told}` : ""}` };
  } catch (error) {
    return { deployed: true, ran: false, calls: model.requests.length - before, error: `run: ${(error as Error).message}` };
  }
}

async function main(): Promise<void> {
  const model = await startModelStandIn();
  const gitRoot = join(work, "git");
  mkdirSync(gitRoot, { recursive: true });
  const git = await startGitDaemon(gitRoot);
  const cache = process.env.SLIPWAY_PACKAGE_CACHE ?? join(homedir(), ".cache", "slipway-try-projects");
  say(`work directory ${work}; package cache ${cache}; model stand-in ${model.url}`);
  const cp = await startControlPlane(["--data-dir", join(work, "cp")], {
    SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
    SLIPWAY_PACKAGE_CACHE: cache,
    SLIPWAY_CHECK_TIMEOUT_SECONDS: "180",
    SLIPWAY_DATABASE_URL: undefined,
  });
  const rows: string[][] = [];
  try {
    for (const source of sources) {
      let project: Project;
      try {
        project = materialise(source);
      } catch (error) {
        rows.push([source, "?", "?", "-", "no", "no", "-", (error as Error).message]);
        continue;
      }
      const ways: Array<[string, string[]]> = [];
      if (!flags.has("--only-git")) ways.push(["upload", [project.dir, "--name", `${project.name}-upload`, "--config", project.config]]);
      if (!flags.has("--only-upload")) {
        const repo = new TestRepository(gitRoot, project.name);
        repo.copyFrom(project.dir);
        repo.commit({}, "as published");
        ways.push(["git", ["--repo", git.url(project.name), "--ref", "main", "--name", `${project.name}-git`, "--config", project.config]]);
      }
      for (const [way, deployArgs] of ways) {
        say(`${project.name}: deploying by ${way}`);
        const deployed = await deploy(cp, [...deployArgs, ...secretArgs(model)]);
        const outcome: Outcome = deployed.url ? await runOnce(cp, deployed.url, project, model) : { deployed: false, ran: false, error: deployed.error };
        say(
          `${project.name} (${way}): ${outcome.deployed ? "deployed" : "not deployed"}, ${outcome.ran ? "run ok" : "no run"}${outcome.error ? `: ${outcome.error}` : ""}`,
        );
        const error = (outcome.error ?? "").replace(/\s+/g, " ").slice(0, 300);
        rows.push([
          project.name,
          project.manager,
          project.layout,
          way,
          outcome.deployed ? "yes" : "no",
          outcome.ran ? "yes" : "no",
          String(outcome.calls ?? "-"),
          error,
        ]);
      }
    }
  } finally {
    await cp.kill("SIGTERM");
    await git.stop();
    await model.close();
    if (!flags.has("--keep")) rmSync(work, { recursive: true, force: true });
  }
  printTable(["project", "package manager", "layout", "via", "deployed", "run ok", "model calls", "first error"], rows);
  process.exit(rows.every((row) => row[5] === "yes") ? 0 : 1);
}

function printTable(header: string[], rows: string[][]): void {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`;
  console.log([line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n"));
}

await main();
