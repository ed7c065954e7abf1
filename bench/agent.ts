/**
 * `npm run bench:agent`: the same @langchain/langgraph-sdk workload against our
 * agent server (embedded PGlite, and PostgreSQL when one is available) and the
 * peer @langchain/langgraph-api dev server, on the same graph (examples/agent),
 * in one run on this machine, then a table and the ratios ours/peer.
 *
 *   --only ours,postgres,peer,floor   what to measure (default: all four; "floor" is
 *                               the graph alone, the graph with our checkpointer, and
 *                               the SDK alone: see agent/floor.ts)
 *   --runs 400 --seconds 60     bound of the create+wait phase (count, then time)
 *   --concurrency 20            callers in the create+wait phase
 *   --streams 30 --burst 50     sizes of the stream and enqueue phases
 *   --json <file>               also write the figures as JSON
 *
 * Everything listens on 127.0.0.1; every child server is stopped at the end.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { stopAll } from "./agent/processes.ts";
import { render, renderFloor, type Column, type Floor } from "./agent/report.ts";
import { logDir, postgresForBench, startOurs, startPeer, type Target } from "./agent/targets.ts";
import { runWorkload, type WorkloadOptions } from "./agent/workload.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const { values: flags } = parseArgs({
  options: {
    only: { type: "string", default: "ours,postgres,peer,floor" },
    runs: { type: "string", default: "400" },
    seconds: { type: "string", default: "60" },
    concurrency: { type: "string", default: "20" },
    streams: { type: "string", default: "30" },
    burst: { type: "string", default: "50" },
    json: { type: "string" },
  },
});

const wanted = new Set(flags.only.split(",").map((s) => s.trim()));
for (const name of wanted) if (!["ours", "postgres", "peer", "floor"].includes(name)) throw new Error(`--only: unknown target '${name}'`);
const workload: WorkloadOptions = {
  runs: Number(flags.runs),
  seconds: Number(flags.seconds),
  concurrency: Number(flags.concurrency),
  streams: Number(flags.streams),
  burst: Number(flags.burst),
};

interface Plan {
  label: string;
  start: () => Promise<Target>;
}

async function main(): Promise<Column[]> {
  const plans: Plan[] = [];
  if (wanted.has("ours")) plans.push({ label: "ours (PGlite)", start: () => startOurs(repoRoot, "ours (PGlite)") });
  if (wanted.has("postgres") && pg) {
    plans.push({ label: "ours (PostgreSQL)", start: () => startOurs(repoRoot, "ours (PostgreSQL)", { databaseUrl: pg.databaseUrl, schema: pgSchema }) });
  }
  if (wanted.has("peer")) plans.push({ label: "peer", start: () => startPeer(repoRoot) });

  const columns: Column[] = [];
  try {
    // One target at a time: on two cores, servers running side by side would skew each other.
    for (const plan of plans) {
      console.error(`[bench] starting ${plan.label}`);
      let target: Target | undefined;
      try {
        target = await plan.start();
        console.error(`[bench] ${target.label} at ${target.url}: running workload`);
        columns.push({ label: target.label, result: await runWorkload(target.url, workload) });
      } catch (error) {
        columns.push({ label: target?.label ?? plan.label, failure: (error as Error).message });
      } finally {
        await target?.stop();
      }
    }
  } finally {
    await stopAll();
  }
  return columns;
}

/** The floors, in a child process of their own (see agent/floor.ts). */
function measureFloor(): Floor {
  console.error("[bench] measuring the floors: the graph alone and with our checkpointer, the SDK against a stub");
  const output = execFileSync(process.execPath, ["--import", "tsx", "bench/agent/floor.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      FLOOR_RUNS: String(workload.runs),
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
let columns: Column[];
try {
  floor = wanted.has("floor") ? measureFloor() : undefined;
  columns = await main();
} finally {
  await pg?.release();
}
console.log(render(columns, workload.concurrency, workload.burst));
if (floor) console.log(`\n${renderFloor(floor, columns, workload.concurrency)}`);
console.log(`\nserver logs: ${logDir}`);
if (flags.json) writeFileSync(flags.json, JSON.stringify({ workload, columns, floor }, null, 2));
process.exitCode = columns.some((c) => c.result) ? 0 : 1;
