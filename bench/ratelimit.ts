// `npm run bench:ratelimit`: what the limiter costs. One endpoint, GET /v2/deployments,
// served with the limiter off, with the in-memory store and with Redis, measured in
// the same run in interleaved rounds (so drift on the machine hits every mode alike).
// Prints req/s and server CPU per request for each mode, and the overhead against
// "off". The overhead figures are medians of per-round ratios against "off": on a
// shared machine whole rounds drift, and a ratio of neighbours cancels most of that.
//
// Two servings of the endpoint, each its own table (bench/ratelimit-server.ts):
// "platform", the control plane as `slipway up` runs it (API-key auth, embedded
// storage), which is what the goal is about; and "bare", a handler that does nothing,
// where the limiter's cost is the largest share it can be.
//
// Environment: BENCH_ENDPOINTS (default "platform,bare"), BENCH_SECONDS (per round,
// default 2), BENCH_ROUNDS (default 12),
// BENCH_CONNECTIONS (default 32), BENCH_PIPELINING (default 1, like autocannon),
// SLIPWAY_TEST_REDIS_URL (else a private redis-server is started and stopped).
import { spawn, fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { getRequest, runLoad } from "./http-load.ts";

type Mode = "off" | "memory" | "redis";
type Endpoint = "platform" | "bare";
const MODES: Mode[] = ["off", "memory", "redis"];
const ENDPOINTS = (process.env.BENCH_ENDPOINTS ?? "platform,bare").split(",").map((name) => name.trim()) as Endpoint[];
// Enough keys that none nears its 1000 requests per 10 s of the built-in table.
const KEYS: Record<Endpoint, number> = { platform: 200, bare: 1000 };
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 1);
const MAX_REQUESTS_PER_ROUND = 5_000_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Our own redis-server on a free loopback port, unless the test one is given. */
async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.SLIPWAY_TEST_REDIS_URL) return { url: process.env.SLIPWAY_TEST_REDIS_URL, stop: async () => {} };
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

interface Server {
  child: ChildProcess;
  port: number;
  /** Each key as a ready GET request; the connections cycle through them. */
  requests: Buffer[];
  cpuMicros: () => Promise<number>;
}

async function startServer(endpoint: Endpoint, mode: Mode, redisUrl: string): Promise<Server> {
  const child = fork(fileURLToPath(new URL("./ratelimit-server.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, BENCH_ENDPOINT: endpoint, BENCH_MODE: mode, BENCH_REDIS_URL: redisUrl, BENCH_KEYS: String(KEYS[endpoint]) },
  });
  const [message] = (await once(child, "message")) as [{ port: number; keys: string[] }];
  const requests = message.keys.map((key) => getRequest("/v2/deployments", { "x-api-key": key }));
  const cpuMicros = async () => {
    child.send({ type: "cpu" });
    const [reply] = (await once(child, "message")) as [{ usage: NodeJS.CpuUsage }];
    return reply.usage.user + reply.usage.system;
  };
  return { child, port: message.port, requests, cpuMicros };
}

async function measure(server: Server, durationMs: number) {
  const cpuBefore = await server.cpuMicros();
  const load = await runLoad({
    host: "127.0.0.1",
    port: server.port,
    requests: server.requests,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    durationMs,
    maxRequests: MAX_REQUESTS_PER_ROUND,
  });
  const cpu = (await server.cpuMicros()) - cpuBefore;
  const errors = Object.entries(load.byStatus).filter(([status]) => status !== "200");
  if (errors.length) throw new Error(`unexpected statuses: ${JSON.stringify(load.byStatus)}`);
  return { rps: load.requestsPerSecond, cpuPerRequest: cpu / load.responses };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function report(endpoint: Endpoint, samples: Map<Mode, Array<{ rps: number; cpuPerRequest: number }>>): void {
  const off = samples.get("off")!;
  // Each round measures every mode back to back, so the ratio within a round cancels
  // most of the drift a shared machine adds; the median of those ratios is the figure.
  const paired = (mode: Mode, pick: (s: { rps: number; cpuPerRequest: number }) => number) =>
    median(samples.get(mode)!.map((sample, round) => pick(sample) / pick(off[round]!)));
  const served =
    endpoint === "platform" ? "the control plane as `slipway up` serves it (API key, embedded storage)" : "a bare handler that does nothing (worst case)";
  console.log(
    `\nGET /v2/deployments, ${served}: ${CONNECTIONS} connections x ${PIPELINING} pipelined, ${ROUNDS} rounds of ${SECONDS} s; node ${process.version}\n`,
  );
  console.log(
    "| limiter | req/s (median) | throughput vs off (median of per-round ratios) | server CPU µs/req (median) | CPU/req vs off (median of per-round ratios) | best req/s | best CPU µs/req |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const mode of MODES) {
    const list = samples.get(mode)!;
    const vs = (ratio: number) => (mode === "off" ? "-" : `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`);
    console.log(
      `| ${mode} | ${median(list.map((s) => s.rps)).toFixed(0)} | ${vs(paired(mode, (s) => s.rps))} | ${median(list.map((s) => s.cpuPerRequest)).toFixed(1)} | ` +
        `${vs(paired(mode, (s) => s.cpuPerRequest))} | ${Math.max(...list.map((s) => s.rps)).toFixed(0)} | ${Math.min(...list.map((s) => s.cpuPerRequest)).toFixed(1)} |`,
    );
  }
}

async function benchEndpoint(endpoint: Endpoint, redisUrl: string): Promise<void> {
  const servers = new Map<Mode, Server>();
  try {
    for (const mode of MODES) servers.set(mode, await startServer(endpoint, mode, redisUrl));
    // Warm up each server (JIT, connections, Redis script cache) before measuring.
    for (const mode of MODES) await measure(servers.get(mode)!, 3_000);
    const samples = new Map<Mode, Array<{ rps: number; cpuPerRequest: number }>>(MODES.map((mode) => [mode, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? MODES : [...MODES].reverse();
      for (const mode of order) {
        const sample = await measure(servers.get(mode)!, SECONDS * 1_000);
        samples.get(mode)!.push(sample);
        console.error(`${endpoint} round ${round} ${mode.padEnd(6)} ${sample.rps.toFixed(0)} req/s, ${sample.cpuPerRequest.toFixed(1)} µs CPU/request`);
      }
    }
    report(endpoint, samples);
  } finally {
    for (const server of servers.values()) {
      server.child.send({ type: "stop" });
      if (server.child.exitCode === null) await once(server.child, "exit");
    }
  }
}

const redis = await startRedis();
try {
  for (const endpoint of ENDPOINTS) await benchEndpoint(endpoint, redis.url);
} finally {
  await redis.stop();
}
