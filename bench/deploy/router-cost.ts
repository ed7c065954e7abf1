import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { storageSocketPath } from "../../src/pipeline/runtime/deployment-storage.ts";
import type { ControlPlaneProcess } from "../../test/support/control-plane-process.ts";

const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));
const DIRECT_KEY = "bench-direct-key";

export interface RouterComparison {
  rounds: number;
  seconds: number;
  concurrency: number;
  workloads: Array<{ name: string; direct: Measure; router: Measure }>;
}

interface Measure {
  rps: number;
  p50: number;
  requests: number;
  /** CPU time of the control plane process (the router, and the embedded database it hosts) per request. */
  controlPlaneCpuUs: number;
  /** Of it, in the kernel (system calls: sockets, wake-ups). */
  controlPlaneSysUs: number;
}

/**
 * The same SDK workloads against the deployment's URL (through the router) and against
 * an agent process of the deployment called directly: one more `slipway agent` on the
 * same build and the same database as the revision's own processes, with a key of its
 * own (the revision's key never leaves the control plane).
 */
export async function compareRouter(options: {
  controlPlane: ControlPlaneProcess;
  deployment: { id: string; url: string };
  deployLog: string;
  dataDir: string;
  rounds: number;
  seconds: number;
  concurrency: number;
  /** Only the workloads whose name starts with this. */
  workload?: string;
}): Promise<RouterComparison> {
  const build = /Starting the agent server \(build ([0-9a-f]+)\)/.exec(options.deployLog)?.[1];
  if (!build) throw new Error("no build named in the deploy log");
  const direct = await startDirect(join(options.dataDir, "builds", build), storageSocketPath(options.dataDir, options.deployment.id));
  try {
    // The SDK's client sends at most 4 requests at once unless told otherwise.
    const callerOptions = { maxConcurrency: Infinity };
    const viaRouter = new Client({ apiUrl: options.deployment.url, apiKey: options.controlPlane.apiKey, callerOptions });
    const viaDirect = new Client({ apiUrl: direct.url, apiKey: DIRECT_KEY, callerOptions });
    const thread = await viaRouter.threads.create();
    const workloads: Array<{ name: string; call: (client: Client) => Promise<unknown> }> = [
      { name: "threads.get", call: (client) => client.threads.get(thread.thread_id) },
      {
        name: "runs.wait (stateless run of `agent`)",
        call: (client) => client.runs.wait(null, "agent", { input: { messages: [{ role: "human", content: "hi" }] } }),
      },
    ];
    const results: RouterComparison["workloads"] = [];
    for (const workload of workloads.filter((w) => w.name.startsWith(options.workload ?? ""))) {
      const samples = { direct: [] as number[][], router: [] as number[][] };
      const cpu = { direct: [0, 0], router: [0, 0] };
      for (let round = 0; round < options.rounds; round++) {
        // Alternate which goes first, so a drift of the machine weighs on both.
        const order: Array<["direct" | "router", Client]> =
          round % 2 === 0
            ? [
                ["direct", viaDirect],
                ["router", viaRouter],
              ]
            : [
                ["router", viaRouter],
                ["direct", viaDirect],
              ];
        for (const [side, client] of order) {
          const before = cpuMicros(options.controlPlane.child.pid!);
          samples[side].push(await load(() => workload.call(client), options.concurrency, options.seconds));
          const after = cpuMicros(options.controlPlane.child.pid!);
          cpu[side][0] += after[0] - before[0];
          cpu[side][1] += after[1] - before[1];
        }
      }
      const total = options.rounds * options.seconds;
      results.push({ name: workload.name, direct: summarize(samples.direct, total, cpu.direct), router: summarize(samples.router, total, cpu.router) });
    }
    return { rounds: options.rounds, seconds: options.seconds, concurrency: options.concurrency, workloads: results };
  } finally {
    direct.stop();
  }
}

export async function load(call: () => Promise<unknown>, concurrency: number, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

function summarize(rounds: number[][], totalSeconds: number, [user, sys]: number[]): Measure {
  const all = rounds.flat().sort((a, b) => a - b);
  const per = (us: number) => us / Math.max(1, all.length);
  return {
    rps: all.length / totalSeconds,
    p50: all[Math.floor(all.length / 2)] ?? NaN,
    requests: all.length,
    controlPlaneCpuUs: per(user + sys),
    controlPlaneSysUs: per(sys),
  };
}

/** [user, system] CPU time of a process so far (Linux /proc; 0 elsewhere), in microseconds. */
function cpuMicros(pid: number): [number, number] {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second).
    return [Number(fields[11]) * 10_000, Number(fields[12]) * 10_000];
  } catch {
    return [0, 0];
  }
}

async function startDirect(buildDir: string, socket: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [BIN, "agent", "--config", join(buildDir, "langgraph.json"), "--port", "0", "--api-key", DIRECT_KEY], {
    cwd: buildDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SLIPWAY_STORAGE_SOCKET: socket },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes('"listening"')) resolve(JSON.parse(line).url);
    });
    child.once("exit", (code) => reject(new Error(`the direct agent process exited with ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}
