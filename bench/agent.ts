/**
 * `npm run bench:agent`: the same @langchain/langgraph-sdk workload against our
 * agent server (embedded PGlite, and PostgreSQL when one is available) and the
 * peer @langchain/langgraph-api dev server, on the same graph (examples/agent),
 * in one run on this machine, then a table and the ratios ours/peer.
 *
 *   --only ours,postgres,peer,floor,roundtrips,inflight
 *                               what to measure (default: all). "floor" is the graph
 *                               alone, the graph with our checkpointer, and the SDK alone
 *                               (agent/floor.ts); "roundtrips" counts statements per run
 *                               (agent/round-trips.ts); "inflight" is the many-waiting-runs
 *                               scenario (agent/inflight.ts) on PGlite, and on PostgreSQL
 *                               when "postgres" is also listed
 *   --inflight-runs 1000 --inflight-clients 50 --inflight-wait-ms 2000
 *   --runs 2000 --seconds 60    bound of the create+wait phase (count, then time); also the
 *                               floors' run count. 400 runs lasted about 2 s on our servers,
 *                               mostly JIT warm-up: 2000 measure the steady state
 *   --warmup 1000               create+wait runs before the measured ones, on every server
 *                               alike, and graph runs before each in-process floor, not
 *                               counted: JIT, caches and PGlite's WebAssembly warm up (a
 *                               server's CPU per run kept falling for about 2,000 runs)
 *   --concurrency 20            callers in the create+wait phase
 *   --streams 30 --burst 50     sizes of the stream and enqueue phases
 *   --json <file>               also write the figures as JSON
 *
 * After the table: where the create+wait phase's CPU went per run (client, server, its
 * main thread, PostgreSQL, the machine), beside the durable ceiling of the same back end
 * (agent/cpu-share.ts; Linux's /proc).
 *
 * Everything listens on 127.0.0.1; every child server is stopped at the end.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { stopAll } from "./agent/processes.ts";
import { runInflight, type InflightOptions } from "./agent/inflight.ts";
import {
  render,
  renderCpu,
  renderFloor,
  renderInflight,
  renderRoundTrips,
  type Column,
  type Floor,
  type InflightColumn,
  type RoundTrips,
} from "./agent/report.ts";
import { dropSchema, logDir, postgresDurability, postgresForBench, startOurs, startPeer, type Target } from "./agent/targets.ts";
import type { WorkloadOptions } from "./agent/workload.ts";
import { measureInTurn, type Plan } from "./agent/measure.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const { values: flags } = parseArgs({
  options: {
    only: { type: "string", default: "ours,postgres,peer,floor,roundtrips,inflight" },
    "inflight-runs": { type: "string", default: "1000" },
    "inflight-clients": { type: "string", default: "50" },
    "inflight-wait-ms": { type: "string", default: "2000" },
    runs: { type: "string", default: "2000" },
    warmup: { type: "string", default: "1000" },
    seconds: { type: "string", default: "60" },
    concurrency: { type: "string", default: "20" },
    streams: { type: "string", default: "30" },
    burst: { type: "string", default: "50" },
    json: { type: "string" },
  },
});

const wanted = new Set(flags.only.split(",").map((s) => s.trim()));
for (const name of wanted)
  if (!["ours", "postgres", "peer", "floor", "roundtrips", "inflight"].includes(name)) throw new Error(`--only: unknown target '${name}'`);
const workload: WorkloadOptions = {
  runs: Number(flags.runs),
  warmup: Number(flags.warmup),
  seconds: Number(flags.seconds),
  concurrency: Number(flags.concurrency),
  streams: Number(flags.streams),
  burst: Number(flags.burst),
};

const inflight: InflightOptions = {
  runs: Number(flags["inflight-runs"]),
  clients: Number(flags["inflight-clients"]),
  waitMs: Number(flags["inflight-wait-ms"]),
};

async function main(): Promise<Column[]> {
  const plans: Plan[] = [];
  if (wanted.has("ours")) plans.push({ label: "ours (PGlite)", start: () => startOurs(repoRoot, "ours (PGlite)") });
  if (wanted.has("postgres") && pg) {
    plans.push({ label: "ours (PostgreSQL)", start: () => startOurs(repoRoot, "ours (PostgreSQL)", { databaseUrl: pg.databaseUrl, schema: pgSchema }) });
  }
  if (wanted.has("peer")) plans.push({ label: "peer", start: () => startPeer(repoRoot) });

  return measureInTurn(plans, workload, (plan, target) => ({
    serverPid: target.cpuPid,
    postmasterPid: plan.label.includes("PostgreSQL") ? pg?.postmasterPid() : undefined,
  }));
}

/** The in-flight scenario's project: one graph that awaits as a model call would. */
const FIXTURE = "bench/agent/fixture/langgraph.json";

/**
 * The in-flight scenario against our server on each back end, one at a time, each
 * server restarted once on its storage first (see startOurs).
 */
async function measureInflight(): Promise<InflightColumn[]> {
  const plans: Plan[] = [{ label: "ours (PGlite)", start: () => startOurs(repoRoot, "inflight (PGlite)", {}, FIXTURE, true) }];
  if (wanted.has("postgres") && pg) {
    const storage = { databaseUrl: pg.databaseUrl, schema: `${pgSchema}_inflight` };
    plans.push({ label: "ours (PostgreSQL)", start: () => startOurs(repoRoot, "inflight (PostgreSQL)", storage, FIXTURE, true) });
  }
  const columns: InflightColumn[] = [];
  try {
    for (const plan of plans) {
      console.error(`[bench] in flight: ${inflight.runs} runs on ${plan.label}`);
      let target: Target | undefined;
      try {
        target = await plan.start();
        columns.push({ label: plan.label, result: await runInflight(target.url, target.pid, inflight) });
      } catch (error) {
        columns.push({ label: plan.label, failure: (error as Error).message });
      } finally {
        await target?.stop();
      }
    }
  } finally {
    await stopAll();
    if (wanted.has("postgres") && pg) await dropSchema(pg.databaseUrl, `${pgSchema}_inflight`);
  }
  return columns;
}

/** Statements and round trips per run, in a child process that watches the drivers (agent/round-trips.ts). */
function measureRoundTrips(): RoundTrips {
  console.error("[bench] counting statements and round trips per run");
  const output = execFileSync(process.execPath, ["--import", "tsx", "bench/agent/round-trips.ts"], {
    cwd: repoRoot,
    env: { ...process.env, ROUND_TRIPS_DATABASE_URL: wanted.has("postgres") ? (pg?.databaseUrl ?? "") : "", ROUND_TRIPS_SCHEMA: `${pgSchema}_rt` },
    encoding: "utf8",
  });
  return JSON.parse(output.trim().split("\n").at(-1)!) as RoundTrips;
}

/** The floors, in a child process of their own (see agent/floor.ts). */
function measureFloor(): Floor {
  console.error("[bench] measuring the floors: the graph alone and with our checkpointer, the SDK against a stub");
  const output = execFileSync(process.execPath, ["--import", "tsx", "bench/agent/floor.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      FLOOR_RUNS: String(workload.runs),
      FLOOR_WARMUP: String(workload.warmup),
      FLOOR_CONCURRENCY: String(workload.concurrency),
      FLOOR_STREAMS: String(workload.streams),
      FLOOR_DATABASE_URL: pg?.databaseUrl ?? "",
      FLOOR_SCHEMA: `${pgSchema}_floor`,
    },
    encoding: "utf8",
  });
  return JSON.parse(output.trim().split("\n").at(-1)!) as Floor;
}

// A schema of its own, so nothing mixes with what else lives on a shared server.
const pgSchema = `bench_${process.pid}_${Date.now().toString(36)}`;
const pg = wanted.has("postgres") || wanted.has("floor") ? postgresForBench(repoRoot, pgSchema) : undefined;
let floor: Floor | undefined;
let roundTrips: RoundTrips | undefined;
let inflightColumns: InflightColumn[] = [];
let columns: Column[];
let durability: string | undefined;
try {
  durability = pg ? await postgresDurability(pg.databaseUrl) : undefined;
  floor = wanted.has("floor") ? measureFloor() : undefined;
  roundTrips = wanted.has("roundtrips") ? measureRoundTrips() : undefined;
  columns = await main();
  if (wanted.has("inflight")) inflightColumns = await measureInflight();
} finally {
  await pg?.release();
}
console.log(`load average at the end: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
if (durability) console.log(`PostgreSQL: ${durability}`);
if (columns.length) console.log(render(columns, workload.concurrency, workload.burst));
if (floor) console.log(`\n${renderFloor(floor, columns, workload.concurrency)}`);
if (columns.length) console.log(`\n${renderCpu(columns, floor)}`);
if (roundTrips) console.log(`\n${renderRoundTrips(roundTrips)}`);
if (inflightColumns.length) console.log(`\n${renderInflight(inflightColumns, inflight)}`);
console.log(`\nserver logs: ${logDir}`);
if (flags.json) writeFileSync(flags.json, JSON.stringify({ workload, columns, floor, roundTrips, inflight: inflightColumns, durability }, null, 2));
process.exitCode = columns.some((c) => c.result) || inflightColumns.some((c) => c.result) || roundTrips ? 0 : 1;
