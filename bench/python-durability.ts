/**
 * `npm run bench:python-durability`: decision 0036's two ways of storing a Python graph's
 * checkpoints, measured on the same graph (bench/python/durability/steps.py: four nodes,
 * a checkpoint per step) through our agent server on PostgreSQL:
 *   A  the worker's checkpointer calls back to the server's saver (what ships);
 *   B  the worker writes the same tables itself through psycopg, with the stored functions
 *      the server's saver calls (a throwaway prototype: bench/python/durability/option_b,
 *      loaded into the worker from its PYTHONPATH by this bench only).
 * For each: a run's latency with one caller (create thread + runs.wait), runs/s with
 * several callers, and what each checkpointer call costs the graph as it waits for it
 * (timed inside the worker). A and B alternate, `--rounds` times each, on one PostgreSQL
 * (found as bench:agent finds one). PGlite has no option B: its database lives inside
 * the server's process, out of the worker's reach.
 *
 *   --runs 200 --concurrency 10 --concurrent-runs 400 --warmup 30 --rounds 2
 *   --durability sync|async|exit   the runs' durability (default sync: each step waits for its save)
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { ensurePythonEnv, PYTHON_TEST_PACKAGES } from "../test/support/python-env.ts";
import { removeOnExit } from "./agent/processes.ts";
import { postgresDurability, postgresForBench, startOurs } from "./agent/targets.ts";
import { fmt, table } from "./agent/report.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const PROJECT = "bench/python/durability/langgraph.json";
const PROTOTYPE = join(repoRoot, "bench/python/durability/option_b");
const STEPS = 4;

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    concurrency: { type: "string", default: "10" },
    "concurrent-runs": { type: "string", default: "400" },
    warmup: { type: "string", default: "30" },
    rounds: { type: "string", default: "2" },
    durability: { type: "string", default: "sync" },
  },
});
const durability = flags.durability as "sync" | "async" | "exit";
if (!["sync", "async", "exit"].includes(durability)) throw new Error(`--durability: sync, async or exit, not '${flags.durability}'`);

type SaveStats = Record<string, { calls: number; ms: number }>;

interface Measured {
  option: "A" | "B";
  latencies: number[];
  runsPerSecond: number;
  /** Checkpointer calls of each measured phase (one caller, several), with their wall time as the graph waited. */
  saves: { one: SaveStats; many: SaveStats };
  runs: { one: number; many: number };
}

console.error("[bench] the Python environment (made on first run only)");
const python = ensurePythonEnv("bench-python-durability", [...PYTHON_TEST_PACKAGES, "psycopg[binary,pool]>=3.2,<4"]);
const schema = `bench_pydur_${process.pid}_${Date.now().toString(36)}`;
const pg = postgresForBench(repoRoot, schema);
if (!pg) throw new Error("bench:python-durability needs PostgreSQL: set SLIPWAY_BENCH_DATABASE_URL, or have initdb on the PATH");

function readStats(path: string): SaveStats {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as SaveStats) : {};
}

function minus(after: SaveStats, before: SaveStats): SaveStats {
  return Object.fromEntries(
    Object.entries(after).map(([name, s]) => [name, { calls: s.calls - (before[name]?.calls ?? 0), ms: s.ms - (before[name]?.ms ?? 0) }]),
  );
}

/** The stats file is written twice a second: wait until it has counted `calls` saves at least. */
async function statsAfter(path: string, least: number): Promise<SaveStats> {
  for (let i = 0; i < 40; i++) {
    const stats = readStats(path);
    if ((stats.aput?.calls ?? 0) >= least) return stats;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error("the worker's save stats did not arrive");
}

async function oneRun(client: Client): Promise<number> {
  const started = performance.now();
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "steps", { input: { text: "go" }, durability })) as { trail?: string[] };
  if (values?.trail?.length !== STEPS) throw new Error(`a run ended with ${JSON.stringify(values)}`);
  return performance.now() - started;
}

async function measure(option: "A" | "B", round: number): Promise<Measured> {
  const statsPath = join(removeOnExit(mkdtempSync(join(tmpdir(), "slipway-bench-pydur-"))), "saves.json");
  const saved = { ...process.env };
  Object.assign(process.env, {
    SLIPWAY_PYTHON: python,
    PYTHONPATH: PROTOTYPE,
    SLIPWAY_BENCH_SAVE_STATS: statsPath,
    ...(option === "B" ? { SLIPWAY_BENCH_OPTION_B: pg!.databaseUrl, SLIPWAY_BENCH_OPTION_B_SCHEMA: `${schema}_${option.toLowerCase()}${round}` } : {}),
  });
  const label = `option ${option} (round ${round})`;
  const target = await startOurs(repoRoot, label, { databaseUrl: pg!.databaseUrl, schema: `${schema}_${option.toLowerCase()}${round}` }, PROJECT);
  process.env = saved;
  try {
    console.error(`[bench] ${label}: ${flags.warmup} warm-up runs, ${flags.runs} with one caller, ${flags["concurrent-runs"]} with ${flags.concurrency}`);
    const client = new Client({ apiUrl: target.url });
    for (let i = 0; i < Number(flags.warmup); i++) await oneRun(client);
    const before = await statsAfter(statsPath, Number(flags.warmup));
    const latencies: number[] = [];
    for (let i = 0; i < Number(flags.runs); i++) latencies.push(await oneRun(client));
    const sequential = await statsAfter(statsPath, (Number(flags.warmup) + Number(flags.runs)) * (STEPS + 1));
    const total = Number(flags["concurrent-runs"]);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Number(flags.concurrency) }, async () => {
        while (next++ < total) await oneRun(client);
      }),
    );
    const runsPerSecond = (total * 1000) / (performance.now() - started);
    const runs = Number(flags.warmup) + Number(flags.runs) + total;
    const after = await statsAfter(statsPath, runs * (STEPS + 1));
    return {
      option,
      latencies,
      runsPerSecond,
      saves: { one: minus(sequential, before), many: minus(after, sequential) },
      runs: { one: Number(flags.runs), many: total },
    };
  } finally {
    await target.stop();
  }
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

const results: Measured[] = [];
let settings = "";
try {
  settings = await postgresDurability(pg.databaseUrl);
  for (let round = 1; round <= Number(flags.rounds); round++) {
    for (const option of ["A", "B"] as const) results.push(await measure(option, round));
  }
} finally {
  await pg.release();
}

type Phase = "one" | "many";
const perCall = (m: Measured, phase: Phase, name: string) => (m.saves[phase][name]?.calls ? m.saves[phase][name].ms / m.saves[phase][name].calls : NaN);
const perStep = (m: Measured, phase: Phase) => ((m.saves[phase].aput?.ms ?? 0) + (m.saves[phase].aput_writes?.ms ?? 0)) / m.runs[phase] / STEPS;
const columns = results.map((m, i) => ({ label: `${m.option === "A" ? "A: callbacks" : "B: worker writes"} #${Math.floor(i / 2) + 1}`, m }));
const row = (name: string, value: (m: Measured) => number, digits: number) => [name, ...columns.map(({ m }) => fmt(value(m), digits))];
const many = `${flags.concurrency} callers`;
const body = [
  row("run latency, one caller, p50 ms", (m) => percentile(m.latencies, 50), 1),
  row("run latency, one caller, p90 ms", (m) => percentile(m.latencies, 90), 1),
  row(`runs/s, ${many}`, (m) => m.runsPerSecond, 1),
  row("checkpointer wait per step, one caller, ms", (m) => perStep(m, "one"), 2),
  row(`checkpointer wait per step, ${many}, ms`, (m) => perStep(m, "many"), 2),
  row("  checkpoint save (aput), one caller, mean ms", (m) => perCall(m, "one", "aput"), 2),
  row("  step's writes (aput_writes), one caller, mean ms", (m) => perCall(m, "one", "aput_writes"), 2),
  row("  read of the thread (aget_tuple), one caller, mean ms", (m) => perCall(m, "one", "aget_tuple"), 2),
  row("saves per run", (m) => (m.saves.one.aput?.calls ?? 0) / m.runs.one, 1),
];
console.log(`load average at the end: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
console.log(`PostgreSQL: ${settings}; durability "${durability}"; graph: ${STEPS} nodes in a row`);
console.log(table(["", ...columns.map((c) => c.label)], body));
