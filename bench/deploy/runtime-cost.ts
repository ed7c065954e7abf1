import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startControlPlane, type ControlPlaneProcess } from "../../test/support/control-plane-process.ts";
import { api, type Api } from "../../test/pipeline/api.ts";
import { listeningSockets } from "../../test/pipeline/agent-socket.ts";
import { load } from "./router-cost.ts";

export interface RuntimeRow {
  runtime: string;
  /** POST → DEPLOYED of a second deployment of the same repository (the package cache warm). */
  deploySeconds: number;
  /** Resident memory of the deployment's agent server process and its children (one replica). */
  rssMb: number;
  /** Through the router (the deployment's URL), at the given concurrency. */
  threadsGetRps: number;
  runsWaitRps: number;
}

/**
 * One row of the runtimes table: a control plane with `--runtime <runtime>` (its own data,
 * the package cache shared with the other rows), one deployment to warm the cache (and
 * the Docker runtime's base image), a second one timed, its memory read from /proc (a
 * container's processes are this machine's too), and two SDK workloads through the router.
 */
export async function measureRuntime(options: {
  runtime: string;
  root: string;
  gitUrl: string;
  packageCache: string;
  seconds: number;
  concurrency: number;
  extraArgs: string[];
}): Promise<RuntimeRow> {
  let cp: ControlPlaneProcess | undefined;
  try {
    cp = await startControlPlane(["--data-dir", join(options.root, `cp-${options.runtime}`), "--runtime", options.runtime, ...options.extraArgs], {
      SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
      SLIPWAY_PACKAGE_CACHE: options.packageCache,
      SLIPWAY_DATABASE_URL: undefined,
    });
    const cpApi = api(cp);
    const deploy = async (name: string) => {
      const { seconds, deployment, revision } = await deployFromGit(cpApi, options.gitUrl, name);
      return { seconds, id: deployment.id as string, url: deployment.url as string, revision: revision.id as string };
    };
    await deploy(`${options.runtime}-warm-up`);
    const measured = await deploy(`${options.runtime}-measured`);
    console.error(`${options.runtime}: deploy ${measured.seconds.toFixed(1)} s`);
    const sockets = listeningSockets((await cpApi.logs(measured.id, measured.revision, "deploy")).join("\n"));
    const client = new Client({ apiUrl: measured.url, apiKey: cp.apiKey, callerOptions: { maxConcurrency: Infinity } });
    const thread = await client.threads.create();
    const rps = async (call: () => Promise<unknown>) => {
      await load(call, options.concurrency, 1);
      return (await load(call, options.concurrency, options.seconds)).length / options.seconds;
    };
    const threadsGetRps = await rps(() => client.threads.get(thread.thread_id));
    const runsWaitRps = await rps(() => client.runs.wait(null, "agent", { input: { messages: [{ role: "human", content: "hi" }] } }));
    return { runtime: options.runtime, deploySeconds: measured.seconds, rssMb: residentMb(sockets), threadsGetRps, runsWaitRps };
  } finally {
    await cp?.kill("SIGTERM");
  }
}

/** POST /v2/deployments of the repository's main, then waits for DEPLOYED; with the seconds it took. */
export async function deployFromGit(cpApi: Api, gitUrl: string, name: string) {
  const started = performance.now();
  const created = await cpApi.call("POST", "/v2/deployments", {
    name,
    source: "github",
    source_config: { repo_url: gitUrl, deployment_type: "dev" },
    source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
  const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id, { timeoutMs: 900_000 });
  if (revision.status !== "DEPLOYED") throw new Error(`${name}: ${revision.status}: ${revision.status_message}`);
  return { seconds: (performance.now() - started) / 1000, started, deployment: created.body, revision };
}

/** The resident memory of the processes started with one of these sockets on their command line, and their children. */
export function residentMb(sockets: string[]): number {
  return treeMemoryMb(sockets).rss;
}

/**
 * Resident (RSS) and proportional (PSS) memory of those processes. RSS counts the pages a
 * process shares (the node binary's, above all) in full in each; PSS divides them among
 * the processes sharing them, so PSS summed over processes is what the machine spends.
 */
export function treeMemoryMb(sockets: string[]): { rss: number; pss: number } {
  const processes = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        return {
          pid,
          parent: /^PPid:\s+(\d+)/m.exec(status)?.[1],
          rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0),
          command: readFileSync(`/proc/${pid}/cmdline`, "utf8"),
        };
      } catch {
        return undefined;
      }
    })
    .filter((entry) => entry !== undefined);
  const counted = new Set(
    processes.filter((entry) => sockets.some((socket) => entry.command.includes(socket)) && !entry.command.startsWith("docker")).map((entry) => entry.pid),
  );
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of processes) if (entry.parent && counted.has(entry.parent) && !counted.has(entry.pid)) grew = counted.add(entry.pid) !== undefined;
  }
  const tree = processes.filter((entry) => counted.has(entry.pid));
  return { rss: tree.reduce((sum, entry) => sum + entry.rssKb, 0) / 1024, pss: tree.reduce((sum, entry) => sum + pssKb(entry.pid), 0) / 1024 };
}

/** A process's proportional set size (/proc/<pid>/smaps_rollup), in kB; 0 once it is gone. */
export function pssKb(pid: number | string): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
