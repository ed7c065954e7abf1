import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { warmPackageCache } from "../support/package-cache.ts";
import { freePort } from "../support/ports.ts";

/**
 * The README's Quick start, run as printed in a copy of the repository's tracked files (what
 * a fresh clone holds; `node_modules` is linked instead of installed again). The commands
 * and snippets are read from the README itself, so an edit that breaks one fails here. The
 * only changes made to them: the ports (8080 and 2024 may be taken here), and the key and
 * workspace id that the user copies from the first start's output.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PACKAGE_CACHE = join(tmpdir(), "slipway-test-package-cache");
const run = promisify(execFile);

function quickStart(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Quick start");
  const end = readme.indexOf("\n## ", start + 1);
  expect(start, "README has a Quick start section").toBeGreaterThan(0);
  return readme.slice(start, end);
}

/** The fenced blocks of one language, in order. */
function blocks(text: string, language: string): string[] {
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].filter((m) => m[1] === language).map((m) => m[2]);
}

/** A block's commands, without comments and blank lines. */
function commands(block: string): string[] {
  return block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

function waitForLine(child: ChildProcess, pattern: RegExp, output: { text: string }): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const heard = (chunk: Buffer) => {
      output.text += chunk;
      const found = output.text.match(pattern);
      if (found) resolve(found);
    };
    child.stdout!.on("data", heard);
    child.stderr!.on("data", heard);
    child.once("exit", (code) => reject(new Error(`exited with ${code} before ${pattern}:\n${output.text}`)));
  });
}

/** Runs a TypeScript snippet of the README as a module of the copy, so its imports resolve. */
async function runSnippet(clone: string, source: string, env: NodeJS.ProcessEnv): Promise<string> {
  const file = join(clone, `quick-start-snippet-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, `${source}\nconsole.log(JSON.stringify(typeof result === "undefined" ? null : result));\n`);
  const { stdout } = await run(process.execPath, ["--import", "tsx", file], { cwd: clone, env, timeout: 120_000 });
  return stdout.trim().split("\n").pop() ?? "";
}

function stop(child: ChildProcess | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    // The whole group: npm start runs node under a shell.
    process.kill(-child.pid!, "SIGTERM");
  });
}

describe("the README's Quick start, as printed", () => {
  const text = quickStart();
  const sh = blocks(text, "sh");
  const ts = blocks(text, "ts");
  let clone: string;
  let controlPlane: ChildProcess | undefined;
  let agent: ChildProcess | undefined;
  let port: number;
  let apiKey: string;
  let workspaceId: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    await warmPackageCache(PACKAGE_CACHE);
    clone = mkdtempSync(join(tmpdir(), "slipway-quick-start-"));
    const { stdout } = await run("git", ["ls-files", "-z"], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    for (const file of stdout.split("\0").filter(Boolean)) {
      if (!existsSync(join(ROOT, file))) continue;
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(ROOT, file), join(clone, file));
    }
    symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
    port = await freePort();
    // The suite's package cache, so that the example agent's build does not download again.
    env = {
      ...process.env,
      SLIPWAY_PORT: String(port),
      SLIPWAY_PACKAGE_CACHE: PACKAGE_CACHE,
      SLIPWAY_DATABASE_URL: undefined,
      SLIPWAY_API_KEY: undefined,
      SLIPWAY_TENANT_ID: undefined,
      SLIPWAY_URL: undefined,
    };
  }, 300_000);

  it("is part of a README short enough to read in ten minutes (at most 400 lines)", () => {
    expect(readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(400);
  });

  afterAll(async () => {
    await stop(agent);
    await stop(controlPlane);
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it("starts the control plane with npm start, and prints the key it shows", async () => {
    expect(commands(sh[0])).toEqual(["npm install", "npm start"]);
    controlPlane = spawn("npm", ["start"], { cwd: clone, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const output = { text: "" };
    await waitForLine(controlPlane, /listening on http:\/\/127\.0\.0\.1:\d+/, output);
    // Each line the README shows is printed, with the values the user copies.
    const shown = blocks(text, "")[0];
    for (const label of ["organization_id:", "workspace_id:", "api_key:"]) expect(shown).toContain(label);
    workspaceId = output.text.match(/workspace_id:\s+(\S+)/)![1];
    apiKey = output.text.match(/api_key:\s+(slw_\S+)/)![1];
    expect(output.text).toContain('created organization "Default"');
  }, 180_000);

  it("answers the curl of the deployments list with the exported key and workspace", async () => {
    const script = commands(sh[1])
      .map((line) => line.replace("slw_...", apiKey).replace("SLIPWAY_TENANT_ID=...", `SLIPWAY_TENANT_ID=${workspaceId}`).replaceAll("8080", String(port)))
      .join("\n");
    expect(script).toContain(apiKey);
    const { stdout } = await run("bash", ["-c", script], { cwd: clone, env });
    expect(JSON.parse(stdout)).toMatchObject({ resources: [] });
  });

  it("deploys the example agent with the printed command and answers at the printed URL", async () => {
    const [deploy] = commands(sh[2]);
    expect(deploy).toBe("node bin/slipway.js deploy examples/agent");
    const cliEnv = { ...env, SLIPWAY_API_KEY: apiKey, SLIPWAY_TENANT_ID: workspaceId, SLIPWAY_URL: `http://127.0.0.1:${port}` };
    const { stdout, stderr } = await run("bash", ["-c", deploy], { cwd: clone, env: cliEnv, timeout: 400_000 });
    // The progress goes to stderr, the URL alone to stdout (for scripts).
    expect(stderr).toContain("DEPLOYED");
    const url = stdout.match(/http:\/\/127\.0\.0\.1:\d+\/deployments\/[0-9a-f-]{36}/)![0];
    // The README's client line, pointed at the printed URL, then the agent snippet's calls.
    const clientLine = ts[0].trim();
    expect(clientLine).toContain('apiUrl: "http://127.0.0.1:8080/deployments/<id>"');
    const snippet = ts[1].replace(/^const client = .*$/m, clientLine.replace("http://127.0.0.1:8080/deployments/<id>", url));
    const answer = JSON.parse(await runSnippet(clone, snippet, cliEnv));
    expect(answer.messages.at(-1).content).toBe("You said: hello");
  }, 420_000);

  it("serves the example agent with slipway agent, and answers the SDK snippet", async () => {
    const [command] = commands(sh[3]);
    expect(command).toMatch(/^node bin\/slipway\.js agent --config examples\/agent\/langgraph\.json --port 2024$/);
    const agentPort = await freePort();
    agent = spawn("bash", ["-c", `exec ${command.replace("2024", String(agentPort))}`], { cwd: clone, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    await waitForLine(agent, /listening/, { text: "" });
    const snippet = ts[1].replace("http://127.0.0.1:2024", `http://127.0.0.1:${agentPort}`);
    expect(snippet).toContain(`http://127.0.0.1:${agentPort}`);
    const answer = JSON.parse(await runSnippet(clone, snippet, env));
    expect(answer.messages.at(-1).content).toBe("You said: hello");
  }, 180_000);
});
