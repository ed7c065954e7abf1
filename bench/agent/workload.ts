import { Client } from "@langchain/langgraph-sdk";
import { cpuPerRun, cpuSample, partsPerRun, processTreeTicks, type CpuPerRun } from "./cpu-share.ts";

/**
 * The SDK workload every target gets, in the same order. All loops are bounded
 * by a count and a deadline, so a slow or stuck server ends the phase instead
 * of the bench.
 */
export interface WorkloadOptions {
  runs: number;
  /** create+wait runs by `concurrency` callers before the measured ones, not counted (JIT, caches, pools). */
  warmup: number;
  concurrency: number;
  seconds: number;
  streams: number;
  burst: number;
}

export interface WorkloadResult {
  waitRuns: number;
  waitErrors: number;
  runsPerSecond: number;
  waitP50Ms: number;
  waitP99Ms: number;
  streamFirstUpdateP50Ms: number;
  streamErrors: number;
  burstMs: number;
  /** Whether the thread held every enqueued exchange, in order, after the burst. */
  burstComplete: boolean;
  /** Where the CPU of the create+wait phase went (cpu-share.ts); undefined off Linux. */
  waitCpu?: CpuPerRun;
  firstError?: string;
}

/** The processes whose CPU the create+wait phase accounts for. */
export interface Watched {
  serverPid?: number;
  postmasterPid?: number;
  /** Processes inside the server whose CPU is also given apart, by name (bench:python's worker). */
  parts?: Record<string, number>;
}

const partTicks = (parts: Record<string, number> = {}) => Object.fromEntries(Object.entries(parts).map(([name, pid]) => [name, processTreeTicks(pid)]));

const ASSISTANT = "agent";
/** Longest any single call may take; a server that stops answering fails the step. */
const STEP_TIMEOUT_MS = 120_000;
const input = (text: string) => ({ messages: [{ role: "human", content: text }] });

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

export async function runWorkload(apiUrl: string, options: WorkloadOptions, watched: Watched = {}): Promise<WorkloadResult> {
  // No retries: a failure is counted, not hidden behind the SDK's backoff. The SDK's
  // client sends at most 4 requests at once unless told otherwise, which would make
  // "concurrency 20" a concurrency of 4.
  const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0, maxConcurrency: Infinity }, timeoutMs: STEP_TIMEOUT_MS });
  let firstError: string | undefined;
  const noteError = (error: unknown) => {
    firstError ??= error instanceof Error ? error.message : String(error);
  };

  // Warm-up: first requests pay for graph loading and JIT, on every server alike. It is
  // the measured workload itself, at its concurrency; floor.ts warms up each in-process
  // figure with as many graph runs (README, Performance).
  await createAndWait(client, { ...options, runs: options.warmup }, noteError);

  const before = cpuSample(watched.serverPid, watched.postmasterPid);
  const partsBefore = partTicks(watched.parts);
  const wait = await createAndWait(client, options, noteError);
  const after = cpuSample(watched.serverPid, watched.postmasterPid);
  const partsAfter = partTicks(watched.parts);
  const waitCpu = before && after && wait.latencies.length ? cpuPerRun(before, after, wait.latencies.length) : undefined;
  if (waitCpu && watched.parts) waitCpu.partsMs = partsPerRun(partsBefore, partsAfter, wait.latencies.length);
  const stream = await firstUpdates(client, options, noteError);
  const burst = await enqueueBurst(client, options.burst).catch((error) => {
    noteError(error);
    return { ms: Number.NaN, complete: false };
  });
  return {
    waitRuns: wait.latencies.length,
    waitErrors: wait.errors,
    runsPerSecond: wait.latencies.length / (wait.elapsedMs / 1000),
    waitP50Ms: percentile(wait.latencies, 50),
    waitP99Ms: percentile(wait.latencies, 99),
    streamFirstUpdateP50Ms: percentile(stream.latencies, 50),
    streamErrors: stream.errors,
    burstMs: burst.ms,
    burstComplete: burst.complete,
    waitCpu,
    firstError,
  };
}

/** create-thread + runs.wait by `concurrency` callers until `runs` are done or the deadline passes. */
async function createAndWait(client: Client, options: WorkloadOptions, noteError: (e: unknown) => void) {
  const latencies: number[] = [];
  let started = 0;
  let errors = 0;
  const began = performance.now();
  const deadline = began + options.seconds * 1000;
  const caller = async () => {
    while (started < options.runs && performance.now() < deadline) {
      const n = started++;
      const t0 = performance.now();
      try {
        const thread = await client.threads.create();
        const values = (await client.runs.wait(thread.thread_id, ASSISTANT, { input: input(`hello ${n}`) })) as {
          messages?: Array<{ content?: unknown }>;
        } | null;
        // A fast wrong answer is no answer: the run's reply must be in what wait returned.
        const reply = values?.messages?.at(-1)?.content;
        if (reply !== `You said: hello ${n}`) throw new Error(`runs.wait returned ${JSON.stringify(values)?.slice(0, 200)} for run ${n}`);
        latencies.push(performance.now() - t0);
      } catch (error) {
        errors++;
        noteError(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, caller));
  const elapsedMs = performance.now() - began;
  latencies.sort((a, b) => a - b);
  return { latencies, errors, elapsedMs };
}

/** Time from sending a threadless streamed run to its first `updates` event, one at a time. */
export async function firstUpdates(client: Client, options: WorkloadOptions, noteError: (e: unknown) => void) {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + options.seconds * 1000;
  for (let i = 0; i < options.streams && performance.now() < deadline; i++) {
    const t0 = performance.now();
    let first: number | undefined;
    try {
      for await (const chunk of client.runs.stream(null, ASSISTANT, {
        input: input(`stream ${i}`),
        streamMode: "updates",
        signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
      })) {
        // Read to the end so the run finishes before the next one starts.
        if (first === undefined && chunk.event === "updates") first = performance.now() - t0;
      }
      if (first === undefined) throw new Error("stream ended without an updates event");
      latencies.push(first);
    } catch (error) {
      errors++;
      noteError(error);
    }
  }
  latencies.sort((a, b) => a - b);
  return { latencies, errors };
}

/** `burst` runs created back to back on one thread (enqueue), then the last one joined. */
async function enqueueBurst(client: Client, burst: number) {
  const thread = await client.threads.create();
  const t0 = performance.now();
  let lastRunId = "";
  for (let i = 0; i < burst; i++) {
    const run = await client.runs.create(thread.thread_id, ASSISTANT, { input: input(`burst ${i}`), multitaskStrategy: "enqueue" });
    lastRunId = run.run_id;
  }
  await client.runs.join(thread.thread_id, lastRunId, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
  const ms = performance.now() - t0;
  // FIFO check: each human message is followed by the answer to it, in creation order.
  const state = await client.threads.getState<{ messages: Array<{ content: unknown }> }>(thread.thread_id);
  const contents = (state.values.messages ?? []).map((m) => String(m.content));
  const expected = Array.from({ length: burst }, (_, i) => [`burst ${i}`, `You said: burst ${i}`]).flat();
  const complete = contents.length === expected.length && contents.every((c, i) => c === expected[i]);
  return { ms, complete };
}
