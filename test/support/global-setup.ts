import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { writePgliteTemplate } from "../../src/storage/pglite.ts";
import { ensureDockerd } from "./dockerd.ts";
import { ensurePythonTestEnv } from "./python-env.ts";

/**
 * Gives the suite a real PostgreSQL server and a real redis-server. `.ci/run` starts
 * them once and passes their URLs in the environment; a developer's plain
 * `npm test` gets a private pair started here and stopped at the end.
 */
export default async function setup(project: TestProject) {
  // The run's own temporary root, removed at the end: everything the suites create
  // through os.tmpdir() (PGlite directories, fixture copies, the servers' files) goes
  // under it, in the test workers and in the processes they start, which inherit TMPDIR.
  // A suite that forgets to clean up then leaks nothing past the run.
  const systemTmp = tmpdir();
  // Slipway's bundle (decision 0041), built once here rather than by the first processes the suites start together.
  execFileSync(process.execPath, ["bin/slipway.js", "--version"], { stdio: "ignore" });
  const runRoot = mkdtempSync(join(systemTmp, "slipway-run-"));
  process.env.TMPDIR = runRoot;
  // As on the suite's PostgreSQL server (fsync off): throwaway databases need no flush to
  // survive a power loss. pglite-durable-fs.test.ts checks the flushes with it on.
  process.env.SLIPWAY_EMBEDDED_FSYNC ??= "off";
  let ownDir: string | undefined;
  let databaseUrl = process.env.SLIPWAY_TEST_DATABASE_URL;
  let redisUrl = process.env.SLIPWAY_TEST_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    // Not under runRoot (mode 0700): as root, PostgreSQL runs as the postgres user, which must reach it.
    ownDir = mkdtempSync(join(systemTmp, "slipway-services-"));
    const output = execFileSync("bash", ["scripts/test-services.sh", "start", ownDir], { encoding: "utf8" });
    for (const line of output.split("\n")) {
      const [key, ...rest] = line.split("=");
      if (key === "SLIPWAY_TEST_DATABASE_URL") databaseUrl = rest.join("=");
      if (key === "SLIPWAY_TEST_REDIS_URL") redisUrl = rest.join("=");
    }
  }
  // One empty embedded cluster, unpacked for every PGlite server the tests start.
  let templateDir: string | undefined;
  if (!process.env.SLIPWAY_PGLITE_TEMPLATE) {
    templateDir = mkdtempSync(join(tmpdir(), "slipway-pglite-template-"));
    const template = join(templateDir, "cluster.tar");
    await writePgliteTemplate(template);
    process.env.SLIPWAY_PGLITE_TEMPLATE = template;
  }
  project.provide("pgliteTemplate", process.env.SLIPWAY_PGLITE_TEMPLATE!);
  // Python graphs run in a virtual environment of their own, made once per machine.
  project.provide("pythonPath", ensurePythonTestEnv());
  process.env.SLIPWAY_TEST_DATABASE_URL = databaseUrl;
  process.env.SLIPWAY_TEST_REDIS_URL = redisUrl;
  project.provide("databaseUrl", databaseUrl!);
  project.provide("redisUrl", redisUrl!);
  // The Docker runtime's tests: dockerd, started here if docker is installed and none runs.
  const dockerd = await ensureDockerd();
  project.provide("dockerHost", dockerd.host);
  return async () => {
    await dockerd.stop();
    killLeftovers(runRoot);
    if (templateDir) rmSync(templateDir, { recursive: true, force: true });
    if (ownDir) {
      execFileSync("bash", ["scripts/test-services.sh", "stop", ownDir]);
      rmSync(ownDir, { recursive: true, force: true });
    }
    rmSync(runRoot, { recursive: true, force: true });
  };
}

/**
 * Processes a suite started and could not stop (a test worker killed before its afterAll:
 * a git daemon, a control plane, agent processes) name the run's temporary root on their
 * command line: stopped here, so that a run never leaves a server or a port behind.
 */
function killLeftovers(runRoot: string): void {
  if (!existsSync("/proc")) return;
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(runRoot)) process.kill(pid, "SIGKILL");
    } catch {
      // Gone already, or not ours to read.
    }
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    pgliteTemplate: string;
    pythonPath: string;
    dockerHost: string;
  }
}
