// `npm run vendor-version-matrix -- [cli-version]`: the vendor's column of the version
// matrix (docs/version-matrix.md). For each LangGraph.js line of the matrix it serves the
// same project (test/fixtures/version-matrix, installed into the matrix's cache) with
// `langgraphjs dev` of @langchain/langgraph-cli, and puts it through the same SDK checks
// as Slipway's test (test/support/version-checks.ts). A server that does not start is
// "refused" with its first error line. It installs from the npm registry: outside CI.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { CHECKS, runVersionChecks } from "../test/support/version-checks.ts";
import { hasCommand, installedLanggraph, libraryGaps, VERSION_LINES, versionCacheRoot, versionProject } from "../test/support/version-projects.ts";

const cliVersion = process.argv[2] ?? "1.5.1";
const START_TIMEOUT_MS = 180_000;
const say = (text: string) => process.stderr.write(`vendor-version-matrix: ${text}\n`);

/** The vendor's CLI, installed once into the matrix's cache. */
function vendorCli(): string {
  const dir = join(versionCacheRoot(), `vendor-cli-${cliVersion}`);
  const bin = join(dir, "node_modules", ".bin", "langgraphjs");
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    say(`installing @langchain/langgraph-cli@${cliVersion} into ${dir}`);
    execFileSync("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", `@langchain/langgraph-cli@${cliVersion}`], {
      cwd: dir,
      stdio: "inherit",
    });
  }
  return bin;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `langgraphjs dev` in `project`; resolves with its URL once it answers, or with why it did not. */
async function startVendor(bin: string, project: string): Promise<{ url?: string; refused?: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(bin, ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", "langgraph.json"], {
    cwd: project,
    env: { ...process.env, LANGSMITH_TRACING: "false", BROWSER: "none" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  let exited = false;
  child.once("exit", () => (exited = true));
  const stop = async () => {
    if (exited) return;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    await new Promise((resolve) => child.once("exit", resolve));
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && !exited) {
    const ready = await fetch(`${url}/assistants/search`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"graph_id":"chat"}' })
      .then(async (r) => r.ok && ((await r.json()) as unknown[]).length > 0)
      .catch(() => false);
    if (ready) return { url, stop };
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const why =
    plain
      .split("\n")
      .find((line) => /error|requires|version|incompatib/i.test(line))
      ?.trim() ?? (exited ? "exited" : "did not answer in time");
  await stop();
  return { refused: why.split(project).join("<project>").slice(0, 200), stop };
}

const bin = vendorCli();
const rows: string[] = [];
for (const line of VERSION_LINES) {
  const project = await versionProject(line);
  const langgraph = installedLanggraph(project);
  say(`${langgraph}: starting langgraphjs dev`);
  const vendor = await startVendor(bin, project);
  let cells: string[];
  if (!vendor.url) {
    cells = [`refused: ${vendor.refused}`, ...CHECKS.slice(1).map(() => "-")];
  } else {
    try {
      const found = await runVersionChecks(vendor.url, { langgraph, hasCommand: hasCommand(langgraph), lacks: libraryGaps(langgraph) });
      cells = CHECKS.map((name) => (found[name] === "ok" ? "yes" : found[name].startsWith("n/a") ? "n/a" : `no (${found[name].slice(0, 80)})`));
    } finally {
      await vendor.stop();
    }
  }
  const row = `| ${line.langgraph} | ${line.core} | ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  say(row);
  rows.push(row);
}
console.log(`vendor dev server: @langchain/langgraph-cli ${cliVersion}`);
console.log(`| @langchain/langgraph | @langchain/core | ${CHECKS.join(" | ")} |`);
console.log(`|${" --- |".repeat(CHECKS.length + 2)}`);
console.log(rows.join("\n"));
