/**
 * `npm run bench:deploy`: the revision pipeline on this machine, in one run.
 *
 *  1. POST /v2/deployments → DEPLOYED for the example agent (from a git daemon on
 *     loopback), with a cold package cache and then with a warm one (a second
 *     deployment of the same repository: its own build, the cache already filled).
 *  2. Failed requests during a switch: a client loop (4 callers, raw HTTP, no retries)
 *     against the deployment's URL while a new commit is deployed.
 *  3. The router's cost: the same @langchain/langgraph-sdk workload against the
 *     deployment's URL and against one of its agent processes directly, interleaved
 *     rounds, throughput and p50 latency side by side.
 *  4. A sleeping deployment's first request, three times: sent → answered (issue #32).
 *
 *   --rounds 4 --seconds 4 --concurrency 10   the router comparison's shape
 *   --json <file>                             also write the figures as JSON
 *   --router-only                             one deploy, then only the router comparison
 *   --workload threads.get                    only the router workloads whose name starts so
 *   --runtime docker                          deployments as containers (needs dockerd; default local)
 *   --runtimes local,docker                   instead: one row per runtime (warm deploy, RSS per
 *                                             deployment, requests/s through the router), with
 *   --docker-host unix:///run/docker.sock     where dockerd listens (default: the CLI's)
 *   --many 20                                 instead: the example agent deployed 20 times on one
 *                                             control plane per back end, the seed flow on each, and
 *                                             a memory table (issue #32); with
 *   --backends embedded,postgres              which back ends (PostgreSQL: SLIPWAY_BENCH_DATABASE_URL,
 *                                             else a throwaway server from scripts/test-services.sh)
 *
 * Goals (issue #12): warm deploy under 15 s; 0 failed requests; the router at most 10%
 * less throughput and under 1 ms added p50 than calling the process directly.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startControlPlane, type ControlPlaneProcess } from "../test/support/control-plane-process.ts";
import { startGitDaemon, TestRepository } from "../test/support/git-server.ts";
import { sampleFiles, writeSampleProject } from "../test/pipeline/sample-project.ts";
import { api } from "../test/pipeline/api.ts";
import { compareRouter, type RouterComparison } from "./deploy/router-cost.ts";
import { deployFromGit, measureRuntime, type RuntimeRow } from "./deploy/runtime-cost.ts";
import { switchUnderLoad } from "./deploy/switch.ts";
import { measureWakes } from "./deploy/wake.ts";
import { agentAtRestMb, measureMany, reportMany, type ManyRow } from "./deploy/many.ts";
import { postgresForBench } from "./agent/targets.ts";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "4" },
    concurrency: { type: "string", default: "10" },
    json: { type: "string" },
    "router-only": { type: "boolean", default: false },
    workload: { type: "string" },
    runtime: { type: "string", default: "local" },
    runtimes: { type: "string" },
    "docker-host": { type: "string" },
    many: { type: "string" },
    backends: { type: "string", default: "embedded,postgres" },
  },
});

const root = mkdtempSync(join(tmpdir(), "slipway-bench-deploy-"));
let cp: ControlPlaneProcess | undefined;

async function main(): Promise<Figures> {
  const repo = new TestRepository(join(root, "repos"), "agent");
  writeSampleProject(repo.work, "v1");
  repo.commit({}, "v1");
  const git = await startGitDaemon(join(root, "repos"));
  try {
    cp = await startControlPlane(["--data-dir", join(root, "cp"), "--runtime", flags.runtime!], {
      SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
      // A cache of its own, empty: the first deploy is cold.
      SLIPWAY_PACKAGE_CACHE: join(root, "package-cache"),
      SLIPWAY_DATABASE_URL: undefined,
      // A "minute" of the sleep rules lasts a second: the wake rounds need not wait minutes.
      SLIPWAY_SLEEP_MINUTE_MS: "1000",
    });
    const cpApi = api(cp);
    const deploy = async (name: string) => {
      const { seconds, started, deployment, revision } = await deployFromGit(cpApi, git.url("agent"), name);
      await printTimeline(cp!, deployment.id, revision.id, Date.now() - (performance.now() - started));
      return { seconds, deployment, revision };
    };
    const cold = await deploy("bench-cold");
    console.error(`cold deploy: ${cold.seconds.toFixed(1)} s`);
    if (flags["router-only"]) {
      const deployLog = (await cpApi.logs(cold.deployment.id, cold.revision.id, "deploy")).join("\n");
      return { router: await compareRouter(routerOptions(cp, cold.deployment, deployLog)) };
    }
    const warm = await deploy("bench-warm");
    console.error(`warm deploy: ${warm.seconds.toFixed(1)} s`);

    repo.commit({ "src/version.ts": sampleFiles("v2")["src/version.ts"] }, "v2");
    const switched = await switchUnderLoad(cpApi, warm.deployment, cp.apiKey!);
    console.error(`switch: ${switched.requests} requests, ${switched.failed} failed, new revision in ${switched.seconds.toFixed(1)} s`);

    const deployLog = (await cpApi.logs(warm.deployment.id, switched.revisionId, "deploy")).join("\n");
    const router = await compareRouter(routerOptions(cp, warm.deployment, deployLog));
    const wakes = await measureWakes(cpApi, warm.deployment, cp.apiKey!, 3);
    console.error(`wakes: ${wakes.map((s) => s.toFixed(2)).join(", ")} s from the request to its answer`);
    return { cold: cold.seconds, warm: warm.seconds, spawnToReady: await spawnToReady(cp, warm.deployment.id, warm.revision.id), switched, wakes, router };
  } finally {
    await cp?.kill("SIGTERM");
    await git.stop();
  }
}

function routerOptions(controlPlane: ControlPlaneProcess, deployment: { id: string; url: string }, deployLog: string) {
  return {
    controlPlane,
    deployment,
    deployLog,
    dataDir: join(root, "cp"),
    rounds: Number(flags.rounds),
    seconds: Number(flags.seconds),
    concurrency: Number(flags.concurrency),
    workload: flags.workload,
  };
}

/** A revision's build or deploy log, each line with when it was written (ms since the epoch). */
async function logEntries(target: ControlPlaneProcess, deploymentId: string, revisionId: string, type: string) {
  const response = await fetch(`${target.url}/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?type=${type}&limit=1000`, {
    headers: { "x-api-key": target.apiKey!, "x-tenant-id": target.workspaceId! },
  });
  const page = (await response.json()) as { logs: { timestamp: string; message: string }[] };
  return page.logs.map((entry) => ({ at: Date.parse(entry.timestamp), type, message: entry.message }));
}

/** Where a deploy's time went: its build and deploy log lines, in seconds after the POST (stderr). */
async function printTimeline(target: ControlPlaneProcess, deploymentId: string, revisionId: string, postedAt: number) {
  const lines = [...(await logEntries(target, deploymentId, revisionId, "build")), ...(await logEntries(target, deploymentId, revisionId, "deploy"))];
  lines.sort((a, b) => a.at - b.at);
  for (const line of lines) console.error(`  +${((line.at - postedAt) / 1000).toFixed(1)} s [${line.type}] ${line.message.slice(0, 160)}`);
}

/**
 * Seconds from an agent process's spawn ("started (pid") to its revision's DEPLOYED, whose
 * readiness poll reads /ok every 100 ms: goal 3's spawn → /ok, within a poll.
 */
async function spawnToReady(target: ControlPlaneProcess, deploymentId: string, revisionId: string): Promise<number | undefined> {
  const entries = await logEntries(target, deploymentId, revisionId, "deploy");
  const at = (pattern: RegExp) => entries.find((entry) => pattern.test(entry.message))?.at ?? Number.NaN;
  const seconds = (at(/Status: DEPLOYED/) - at(/\] started \(pid/)) / 1000;
  return Number.isFinite(seconds) ? seconds : undefined;
}

interface Figures {
  cold?: number;
  warm?: number;
  spawnToReady?: number;
  wakes?: number[];
  switched?: { requests: number; failed: number; seconds: number };
  router: RouterComparison;
}

function median(values: number[] | undefined): string {
  if (!values?.length) return "?";
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)].toFixed(1);
}

function report(figures: Figures) {
  const { router, switched } = figures;
  const lines = [
    `bench:deploy, ${new Date().toISOString()}, Node ${process.versions.node}, embedded storage, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
    "",
    ...(figures.cold !== undefined && figures.warm !== undefined && switched
      ? [
          "| | figure | goal |",
          "|---|---:|---|",
          `| POST → DEPLOYED, cold package cache | ${figures.cold.toFixed(1)} s | |`,
          `| POST → DEPLOYED, warm package cache | ${figures.warm.toFixed(1)} s | under 15 s |`,
          `| the warm deploy's agent process, spawn → answering /ok (polled every 100 ms) | ${figures.spawnToReady?.toFixed(1) ?? "?"} s | 1.5 s |`,
          `| failed requests during a switch | ${switched.failed} of ${switched.requests} | 0 |`,
          `| the switch: a redeploy (PATCH → DEPLOYED, polled every 0.5 s) under the 4 callers' load | ${switched.seconds.toFixed(1)} s | 8 s |`,
          `| a sleeping deployment's first request, sent → answered (${figures.wakes?.length ?? 0} wakes: median, max) | ${median(figures.wakes)} s, ${Math.max(...(figures.wakes ?? [Number.NaN])).toFixed(1)} s | 2 s |`,
          "",
        ]
      : []),
    `Router cost, SDK workloads at concurrency ${router.concurrency}, ${router.rounds} interleaved rounds of ${router.seconds} s each:`,
    "",
    "| workload | direct req/s | router req/s | throughput | direct p50 ms | router p50 ms | added p50 ms | control plane CPU µs/request, direct / router (of it system) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...router.workloads.map(
      (w) =>
        `| ${w.name} | ${w.direct.rps.toFixed(0)} | ${w.router.rps.toFixed(0)} | ${(((w.router.rps - w.direct.rps) / w.direct.rps) * 100).toFixed(1)}% | ${w.direct.p50.toFixed(2)} | ${w.router.p50.toFixed(2)} | ${(w.router.p50 - w.direct.p50).toFixed(2)} | ${w.direct.controlPlaneCpuUs.toFixed(0)} / ${w.router.controlPlaneCpuUs.toFixed(0)} (${w.direct.controlPlaneSysUs.toFixed(0)} / ${w.router.controlPlaneSysUs.toFixed(0)}) |`,
    ),
    "",
    "Goals: at most 10% less throughput through the router, under 1 ms added p50.",
  ];
  console.log(lines.join("\n"));
}

/** `--runtimes`: the same project on each runtime, one after the other, one row each. */
async function compareRuntimes(runtimes: string[]): Promise<RuntimeRow[]> {
  const repo = new TestRepository(join(root, "repos"), "agent");
  writeSampleProject(repo.work, "v1");
  repo.commit({}, "v1");
  const git = await startGitDaemon(join(root, "repos"));
  const rows: RuntimeRow[] = [];
  try {
    for (const runtime of runtimes) {
      const extraArgs = runtime === "docker" && flags["docker-host"] ? ["--docker-host", flags["docker-host"]] : [];
      rows.push(
        await measureRuntime({
          runtime,
          root,
          gitUrl: git.url("agent"),
          packageCache: join(root, "package-cache"),
          seconds: Number(flags.seconds),
          concurrency: Number(flags.concurrency),
          extraArgs,
        }),
      );
    }
  } finally {
    await git.stop();
  }
  return rows;
}

function reportRuntimes(rows: RuntimeRow[]) {
  console.log(
    [
      `bench:deploy --runtimes, ${new Date().toISOString()}, Node ${process.versions.node}, embedded storage, ${flags.seconds} s per workload at concurrency ${flags.concurrency}, load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(" ")}`,
      "",
      "| runtime | POST → DEPLOYED (warm cache) | RSS per deployment (1 replica) | threads.get req/s via router | runs.wait req/s via router |",
      "|---|---:|---:|---:|---:|",
      ...rows.map(
        (row) =>
          `| ${row.runtime} | ${row.deploySeconds.toFixed(1)} s | ${row.rssMb.toFixed(0)} MB | ${row.threadsGetRps.toFixed(0)} | ${row.runsWaitRps.toFixed(0)} |`,
      ),
    ].join("\n"),
  );
}

/** `--many N`: one control plane per back end, N deployments each, and the memory they take. */
async function compareMany(count: number): Promise<string> {
  const repo = new TestRepository(join(root, "repos"), "agent");
  writeSampleProject(repo.work, "v1");
  repo.commit({}, "v1");
  const git = await startGitDaemon(join(root, "repos"));
  const rows: ManyRow[] = [];
  const repoRoot = fileURLToPath(new URL("../", import.meta.url));
  try {
    const agentAtRest = await agentAtRestMb(repoRoot);
    for (const backend of flags.backends!.split(",") as ManyRow["backend"][]) {
      const server = backend === "postgres" ? postgresForBench(repoRoot, "bench_many") : undefined;
      if (backend === "postgres" && !server) continue;
      try {
        rows.push(
          await measureMany({ backend, databaseUrl: server?.databaseUrl, count, root, gitUrl: git.url("agent"), packageCache: join(root, "package-cache") }),
        );
      } finally {
        await server?.release();
      }
    }
    return [
      `bench:deploy --many ${count}, ${new Date().toISOString()}, Node ${process.versions.node}, load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(" ")}`,
      "",
      reportMany(rows, agentAtRest),
    ].join("\n");
  } finally {
    await git.stop();
  }
}

const run: Promise<unknown> = flags.many
  ? compareMany(Number(flags.many)).then((table) => console.log(table))
  : flags.runtimes
    ? compareRuntimes(flags.runtimes.split(",")).then((rows) => {
        reportRuntimes(rows);
        if (flags.json) writeFileSync(flags.json, JSON.stringify(rows, null, 2));
      })
    : main().then((figures) => {
        report(figures);
        if (flags.json) writeFileSync(flags.json, JSON.stringify(figures, null, 2));
      });

run
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => rmSync(root, { recursive: true, force: true }));
