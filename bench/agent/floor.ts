/**
 * Floors: what the bench's workload costs on this machine before any server does
 * anything of its own. Run as a child of bench/agent.ts (`node --import tsx`), it prints
 * one JSON object:
 *
 * - `graphRunsPerSecond`: the bench graph (examples/agent) invoked in this process by
 *   `concurrency` callers after `FLOOR_WARMUP` runs that are not counted (as each server
 *   is warmed up), each run on its own thread, checkpoints in LangGraph's
 *   MemorySaver: no HTTP, no storage, no queue. A server executes its runs on one
 *   JavaScript thread too, so its create+wait throughput cannot pass this.
 * - `durableRunsPerSecond`: the same, with Slipway's checkpointer on embedded PGlite
 *   and (given `FLOOR_DATABASE_URL`) on PostgreSQL instead of MemorySaver: what durable
 *   storage of LangGraph's checkpoints costs before any HTTP, queue or run record.
 * - `graphFirstUpdateMs`: p50 time from `graph.stream(...)` to its first `updates`
 *   chunk, one stream at a time, same setting.
 * - `transportFirstUpdateMs`: p50 time for the SDK's `runs.stream` to deliver the first
 *   `updates` event from a stub server that answers at once without running anything:
 *   the HTTP request, the SSE response and the SDK's parsing.
 *
 * Graph and transport add up to a floor for a server's first-event latency: a real one
 * must also receive the request, run the graph and send the event.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { MemorySaver } from "@langchain/langgraph";
import { graph as exampleGraph } from "../../examples/agent/src/agent.ts";
import { SlipwaySaver } from "../../src/agentserver/checkpointer/saver.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { machineBusyMs } from "./cpu-share.ts";
import { firstUpdates, percentile } from "./workload.ts";

const runs = Number(process.env.FLOOR_RUNS ?? 400);
const warmup = Number(process.env.FLOOR_WARMUP ?? 50);
const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 20);
const streams = Number(process.env.FLOOR_STREAMS ?? 30);

// The compiled example graph, with an in-memory checkpointer attached as a server attaches its own.
const graph = exampleGraph as unknown as {
  checkpointer?: unknown;
  invoke(input: unknown, config: unknown): Promise<{ messages: Array<{ content: unknown }> }>;
  stream(input: unknown, config: unknown): Promise<AsyncIterable<unknown>>;
};
graph.checkpointer = new MemorySaver();
const input = (text: string) => ({ messages: [{ role: "human", content: text }] });

async function invokeOne(n: number): Promise<void> {
  const values = await graph.invoke(input(`hello ${n}`), { configurable: { thread_id: `floor-${n}` } });
  if (values.messages.at(-1)?.content !== `You said: hello ${n}`) throw new Error(`unexpected answer for run ${n}`);
}

/** `count` runs by `concurrency` callers, numbered from `from`; the seconds they took. */
async function invokeMany(from: number, count: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await invokeOne(from + next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Runs per second, and every CPU's busy time per run meanwhile (cpu-share.ts) when known. */
async function graphThroughput(): Promise<{ rate: number; machineMsPerRun?: number }> {
  // Warmed up as the bench warms up each server (workload.ts): the same runs, not counted.
  await invokeMany(-warmup, warmup);
  const busyBefore = machineBusyMs();
  const rate = runs / (await invokeMany(0, runs));
  const busyAfter = machineBusyMs();
  return { rate, machineMsPerRun: busyBefore !== undefined && busyAfter !== undefined ? (busyAfter - busyBefore) / runs : undefined };
}

async function graphFirstUpdate(): Promise<number> {
  const latencies: number[] = [];
  for (let i = -10; i < streams; i++) {
    const started = performance.now();
    let first: number | undefined;
    for await (const _chunk of await graph.stream(input(`stream ${i}`), { configurable: { thread_id: `floor-stream-${i}` }, streamMode: ["updates"] })) {
      first ??= performance.now() - started;
    }
    if (i >= 0) latencies.push(first!);
  }
  return percentile(
    latencies.sort((a, b) => a - b),
    50,
  );
}

/** A server that answers every request with a finished stream holding one `updates` event. */
async function transportFirstUpdate(): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.end(`event: metadata\ndata: {"run_id":"stub"}\n\nevent: updates\ndata: {"agent":{"messages":[]}}\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  try {
    const client = new Client({ apiUrl: `http://127.0.0.1:${port}`, apiKey: null, callerOptions: { maxRetries: 0 } });
    const options = { runs: 0, warmup: 0, concurrency: 1, seconds: 60, streams, burst: 0 };
    const fail = (error: unknown) => {
      throw error;
    };
    await firstUpdates(client, { ...options, streams: 10 }, fail); // warm-up: connection, JIT
    const measured = await firstUpdates(client, options, fail);
    if (measured.errors || measured.latencies.length !== streams) throw new Error("the stub stream failed");
    return percentile(measured.latencies, 50);
  } finally {
    server.close();
  }
}

/** Throughput with our checkpointer on a fresh PGlite directory or PostgreSQL schema, dropped afterwards. */
async function durableThroughput(databaseUrl?: string): Promise<{ rate: number; machineMsPerRun?: number }> {
  const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), "slipway-floor-"));
  const schema = databaseUrl ? (process.env.FLOOR_SCHEMA ?? `floor_${process.pid}`) : "floor";
  const db = await openDatabase({ databaseUrl, dataDir, schema, component: "agent", poolSize: concurrency + 10 });
  const memory = graph.checkpointer;
  try {
    graph.checkpointer = new SlipwaySaver(db);
    return await graphThroughput();
  } finally {
    graph.checkpointer = memory;
    if (databaseUrl) await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

const graphRunsPerSecond = (await graphThroughput()).rate;
const graphFirstUpdateMs = await graphFirstUpdate();
const durableRunsPerSecond: Record<string, number> = {};
const durableMachineMsPerRun: Record<string, number | undefined> = {};
const backends: Array<[string, string | undefined]> = [["PGlite", undefined]];
if (process.env.FLOOR_DATABASE_URL) backends.push(["PostgreSQL", process.env.FLOOR_DATABASE_URL]);
for (const [backend, databaseUrl] of backends) {
  const { rate, machineMsPerRun } = await durableThroughput(databaseUrl);
  durableRunsPerSecond[backend] = rate;
  durableMachineMsPerRun[backend] = machineMsPerRun;
}
const transportFirstUpdateMs = await transportFirstUpdate();
console.log(JSON.stringify({ graphRunsPerSecond, durableRunsPerSecond, durableMachineMsPerRun, graphFirstUpdateMs, transportFirstUpdateMs }));
