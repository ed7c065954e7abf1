import { readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";

/**
 * The in-flight scenario: `runs` runs of the fixture's `waiter` graph (one node that
 * awaits `waitMs`, as a model call would), created at once by `clients` callers
 * (threads.create, runs.create, then runs.join), timed until every run has ended; and
 * the server's peak resident memory (VmHWM) read from /proc afterwards. Each caller
 * is an SDK client of its own.
 */
export interface InflightOptions {
  runs: number;
  clients: number;
  waitMs: number;
}

export interface InflightResult {
  runs: number;
  ok: number;
  errors: number;
  seconds: number;
  /** The server process's peak RSS in MB, when its pid is known (Linux). */
  peakRssMb?: number;
  /** Its RSS before the scenario (after start-up and one warm-up run), MB. */
  startRssMb?: number;
  /** CPU seconds the server and this client (the bench process) used meanwhile: on a shared machine, what the time was spent on. */
  serverCpuSeconds?: number;
  clientCpuSeconds: number;
  firstError?: string;
}

export async function runInflight(apiUrl: string, serverPid: number | undefined, options: InflightOptions): Promise<InflightResult> {
  // One SDK client per caller. The SDK lets a client have 4 requests under way by
  // default; here each caller's joins must wait side by side, so that cap is lifted.
  const clients = Array.from(
    { length: options.clients },
    () => new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0, maxConcurrency: Infinity }, timeoutMs: 300_000 }),
  );
  // Warm-up: the graph loads on first use.
  const warm = await clients[0].threads.create();
  await clients[0].runs.wait(warm.thread_id, "waiter", { input: { ms: 10 } });

  const startRssMb = rssMb(serverPid, "VmRSS");
  const serverCpuBefore = cpuSeconds(serverPid);
  const clientCpuBefore = process.cpuUsage();
  let next = 0;
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const caller = async (client: Client) => {
    const joins: Promise<void>[] = [];
    while (next < options.runs) {
      next++;
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, "waiter", { input: { ms: options.waitMs } });
      joins.push(
        client.runs
          .join(thread.thread_id, run.run_id)
          .then((values) => {
            if ((values as { waited?: number } | null)?.waited !== options.waitMs) throw new Error(`run ${run.run_id} ended with ${JSON.stringify(values)}`);
            ok++;
          })
          .catch((error: unknown) => {
            errors++;
            firstError ??= error instanceof Error ? error.message : String(error);
          }),
      );
    }
    await Promise.all(joins);
  };
  await Promise.all(clients.map(caller));
  const seconds = (performance.now() - started) / 1000;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const serverCpuAfter = cpuSeconds(serverPid);
  return {
    serverCpuSeconds: serverCpuAfter !== undefined && serverCpuBefore !== undefined ? serverCpuAfter - serverCpuBefore : undefined,
    clientCpuSeconds: (clientCpu.user + clientCpu.system) / 1e6,
    runs: options.runs,
    ok,
    errors,
    seconds,
    peakRssMb: rssMb(serverPid, "VmHWM"),
    startRssMb,
    firstError,
  };
}

/** VmHWM (peak) or VmRSS (now) of a process, in MB (undefined off Linux or once it has exited). */
function rssMb(pid: number | undefined, field: "VmHWM" | "VmRSS"): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds of a process, all its threads (Linux). */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
