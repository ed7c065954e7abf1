import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startControlPlane, type ControlPlaneProcess } from "../../test/support/control-plane-process.ts";
import { api } from "../../test/pipeline/api.ts";
import { listeningSockets } from "../../test/pipeline/agent-socket.ts";
import { startOurs } from "../agent/targets.ts";
import { deployFromGit, pssKb, treeMemoryMb } from "./runtime-cost.ts";

/**
 * `--many N`: the example agent deployed N times on one control plane, and what that
 * costs in memory (issue 32, goal 1): the control plane idle (before any deployment), then
 * with the N deployments at rest, each deployment's agent processes, and the total; then
 * the seed flow on every deployment at once (a thread, two runs enqueued on it, a join of
 * the second, its state), with the highest total seen while they ran. Each figure twice:
 * RSS, and PSS, which divides shared pages (the node binary's) among the processes that
 * share them: the sum of PSS is what the machine spends, the sum of RSS counts the
 * binary once per process.
 */
/** Megabytes, resident (RSS) and proportional (PSS). */
export interface Memory {
  rss: number;
  pss: number;
}

export interface ManyRow {
  backend: "embedded" | "postgres";
  count: number;
  controlPlaneIdleMb: Memory;
  /** With every deployment deployed and idle. */
  controlPlaneMb: Memory;
  /** Each deployment's agent processes and their children, at rest. */
  agentMb: Memory[];
  totalMb: Memory;
  /** The highest total sampled while every deployment ran its seed flow. */
  peakTotalMb: Memory;
  flowsPassed: number;
  deploySeconds: number[];
}

export async function measureMany(options: {
  backend: "embedded" | "postgres";
  databaseUrl?: string;
  count: number;
  root: string;
  gitUrl: string;
  packageCache: string;
}): Promise<ManyRow> {
  const { backend, count } = options;
  let cp: ControlPlaneProcess | undefined;
  try {
    cp = await startControlPlane(
      ["--data-dir", join(options.root, `cp-many-${backend}`), ...(options.databaseUrl ? ["--database-url", options.databaseUrl] : [])],
      {
        SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
        SLIPWAY_PACKAGE_CACHE: options.packageCache,
        SLIPWAY_DATABASE_URL: undefined,
        SLIPWAY_CONTROL_SCHEMA: `bench_many_${Date.now().toString(36)}`,
        SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE: "0",
      },
    );
    const pid = cp.child.pid!;
    await settle();
    const controlPlaneIdleMb = processMb(pid);
    console.error(`${backend}: control plane idle ${controlPlaneIdleMb.rss.toFixed(0)} MB RSS, ${controlPlaneIdleMb.pss.toFixed(0)} MB PSS`);
    const cpApi = api(cp);
    const deployed: { url: string; sockets: string[] }[] = [];
    const deploySeconds: number[] = [];
    for (let i = 0; i < count; i++) {
      const { seconds, deployment, revision } = await deployFromGit(cpApi, options.gitUrl, `many-${backend}-${i + 1}`);
      deploySeconds.push(seconds);
      deployed.push({ url: deployment.url, sockets: listeningSockets((await cpApi.logs(deployment.id, revision.id, "deploy")).join("\n")) });
      console.error(`${backend}: deployment ${i + 1}/${count} in ${seconds.toFixed(1)} s, control plane ${processMb(pid).rss.toFixed(0)} MB RSS`);
    }
    await settle();
    const controlPlaneMb = processMb(pid);
    const agentMb = deployed.map((d) => treeMemoryMb(d.sockets));
    const totalMb = sum([controlPlaneMb, ...agentMb]);

    // Each measure's own peak (PSS is read less often: smaps_rollup walks every mapping),
    // and the control plane's and the agents' parts of the highest RSS total (stderr).
    const peakTotalMb = { ...totalMb };
    let peakSplit = { controlPlane: controlPlaneMb.rss, agents: totalMb.rss - controlPlaneMb.rss };
    const sample = () => {
      const controlPlaneNow = processMb(pid);
      const now = sum([controlPlaneNow, ...deployed.map((d) => treeMemoryMb(d.sockets))]);
      if (now.rss > peakTotalMb.rss) peakSplit = { controlPlane: controlPlaneNow.rss, agents: now.rss - controlPlaneNow.rss };
      peakTotalMb.rss = Math.max(peakTotalMb.rss, now.rss);
      peakTotalMb.pss = Math.max(peakTotalMb.pss, now.pss);
    };
    const sampler = setInterval(sample, 500);
    const outcomes = await Promise.allSettled(deployed.map((d) => seedFlow(d.url, cp!.apiKey!)));
    clearInterval(sampler);
    sample();
    for (const outcome of outcomes) if (outcome.status === "rejected") console.error(`${backend}: a seed flow failed: ${(outcome.reason as Error).message}`);
    console.error(
      `${backend}: peak RSS ${peakTotalMb.rss.toFixed(0)} MB = control plane ${peakSplit.controlPlane.toFixed(0)} + agents ${peakSplit.agents.toFixed(0)} (at rest ${controlPlaneMb.rss.toFixed(0)} + ${(totalMb.rss - controlPlaneMb.rss).toFixed(0)})`,
    );
    return {
      backend,
      count,
      controlPlaneIdleMb,
      controlPlaneMb,
      agentMb,
      totalMb,
      peakTotalMb,
      flowsPassed: outcomes.filter((o) => o.status === "fulfilled").length,
      deploySeconds,
    };
  } finally {
    await cp?.kill("SIGTERM");
  }
}

/** How long one seed flow may take before it counts as failed: a stuck deployment must not hold the bench forever. */
const SEED_FLOW_LIMIT_MS = 300_000;

/**
 * The seed flow: a thread, two runs enqueued on it, a join of the second, the thread's
 * state (4 messages); failed if it takes more than SEED_FLOW_LIMIT_MS.
 */
async function seedFlow(url: string, apiKey: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SEED_FLOW_LIMIT_MS / 1000} s`)), SEED_FLOW_LIMIT_MS);
  });
  try {
    await Promise.race([seedFlowSteps(url, apiKey), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function seedFlowSteps(url: string, apiKey: string): Promise<void> {
  const client = new Client({ apiUrl: url, apiKey });
  const thread = await client.threads.create();
  const say = (content: string) => ({ input: { messages: [{ role: "human", content }] }, multitaskStrategy: "enqueue" as const });
  await client.runs.create(thread.thread_id, "agent", say("one"));
  const second = await client.runs.create(thread.thread_id, "agent", say("two"));
  await client.runs.join(thread.thread_id, second.run_id);
  const state = await client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
  const contents = state.values.messages.map((m) => m.content);
  if (contents.length !== 4 || contents[0] !== "one" || contents[2] !== "two") throw new Error(`unexpected state: ${JSON.stringify(contents)}`);
}

/** `slipway agent` on the example agent, embedded storage, restarted once (as a deployed server runs), at rest. */
export async function agentAtRestMb(repoRoot: string): Promise<Memory> {
  const target = await startOurs(repoRoot, "agent at rest", {}, "examples/agent/langgraph.json", true);
  try {
    await settle();
    return processMb(target.pid!);
  } finally {
    await target.stop();
  }
}

function processMb(pid: number): Memory {
  const rss = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  return { rss, pss: pssKb(pid) / 1024 };
}

function sum(memories: Memory[]): Memory {
  return { rss: memories.reduce((total, m) => total + m.rss, 0), pss: memories.reduce((total, m) => total + m.pss, 0) };
}

/** A few seconds for start-up work (migrations, first garbage collections) to end before memory is read. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5_000));
}

export function reportMany(rows: ManyRow[], agentAtRest: Memory | undefined): string {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const mb = (n: number) => `${n.toFixed(0)} MB`;
  const lines = (measure: keyof Memory) =>
    rows.map((row) => {
      const perDeployment = (row.totalMb[measure] - row.controlPlaneIdleMb[measure]) / row.count;
      const agents = row.agentMb.map((m) => m[measure]);
      const agentsText = `${mb(Math.min(...agents))} / ${mb(median(agents))} / ${mb(Math.max(...agents))}`;
      return `| ${row.backend === "embedded" ? "embedded (default)" : "PostgreSQL"} | ${measure.toUpperCase()} | ${row.count} (${row.flowsPassed}) | ${mb(row.controlPlaneIdleMb[measure])} | ${mb(row.controlPlaneMb[measure])} | ${agentsText} | ${mb(perDeployment)} | ${mb(row.totalMb[measure])} | ${mb(row.peakTotalMb[measure])} | ${median(row.deploySeconds.slice(1)).toFixed(1)} s |`;
    });
  return [
    "| storage | measure | deployments (seed flows passed) | control plane idle | control plane with them | each agent process (min / median / max) | per deployment | total at rest | total, peak during the seed flows | warm deploy, median |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...lines("rss"),
    ...lines("pss"),
    "",
    "RSS counts the pages processes share (the node binary's) once in each; PSS divides them among the processes sharing them, so the PSS total is what the machine spends.",
    "",
    ...(agentAtRest === undefined
      ? []
      : [`\`slipway agent\` at rest (example agent, embedded storage): ${mb(agentAtRest.rss)} RSS, ${mb(agentAtRest.pss)} PSS`, ""]),
    "Goals (issue 32): 20 deployments ≤ 3 GB in all (≤ 150 MB per deployment); control plane idle ≤ 200 MB; `slipway agent` at rest ≤ 250 MB.",
  ].join("\n");
}
