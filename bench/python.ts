/**
 * `npm run bench:python`: the bench:agent SDK workload (bench/agent/workload.ts) against
 *   - our agent server on a Python graph (bench/python/fixture, the twin of examples/agent),
 *     on embedded PGlite and, when one is available, on PostgreSQL (found as bench:agent does);
 *   - the vendor's Python dev server, `langgraph dev` of langgraph-cli[inmem], in memory,
 *     on the same graph and the same Python packages;
 *   - our agent server on the equivalent JS graph (examples/agent, bench:agent's graph),
 *     on the same back ends,
 * one at a time in one run, then a table and the ratios ours-py/vendor-py and ours-py/ours-js.
 * The Python packages live in a virtual environment made on first use and cached
 * (~/.cache/slipway/bench-python-<key>); our servers run their worker on its interpreter.
 *
 *   --only py,py-postgres,vendor,js,js-postgres   what to measure (default: all)
 *   --runs 300 --warmup 100 --seconds 60 --concurrency 20 --streams 30 --burst 50
 *                               as in bench:agent (smaller defaults: the vendor's Python
 *                               server is slow, and the worker warms up in fewer runs)
 *   --json <file>               also write the figures as JSON
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { measureInTurn, type Plan as BasePlan } from "./agent/measure.ts";
import { render, type Column } from "./agent/report.ts";
import { postgresDurability, postgresForBench, startOurs } from "./agent/targets.ts";
import type { WorkloadOptions } from "./agent/workload.ts";
import { renderPythonCpu, renderRatios } from "./python/report.ts";
import { benchPython, installedVersion, PYTHON_FIXTURE, startVendorPython, workerPidOf } from "./python/targets.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const TARGETS = ["py", "py-postgres", "vendor", "js", "js-postgres"];
const { values: flags } = parseArgs({
  options: {
    only: { type: "string", default: TARGETS.join(",") },
    runs: { type: "string", default: "300" },
    warmup: { type: "string", default: "100" },
    seconds: { type: "string", default: "60" },
    concurrency: { type: "string", default: "20" },
    streams: { type: "string", default: "30" },
    burst: { type: "string", default: "50" },
    json: { type: "string" },
  },
});
const wanted = new Set(flags.only.split(",").map((s) => s.trim()));
for (const name of wanted) if (!TARGETS.includes(name)) throw new Error(`--only: unknown target '${name}' (one of ${TARGETS.join(", ")})`);
const workload: WorkloadOptions = {
  runs: Number(flags.runs),
  warmup: Number(flags.warmup),
  seconds: Number(flags.seconds),
  concurrency: Number(flags.concurrency),
  streams: Number(flags.streams),
  burst: Number(flags.burst),
};

console.error("[bench] the Python environment (made on first run only)");
const python = benchPython();
// Our servers start their worker on this interpreter (src/agentserver/python/load.ts).
process.env.SLIPWAY_PYTHON = python;
const versions = ["langgraph", "langchain-core", "langgraph-api", "langgraph-cli"].map((d) => `${d} ${installedVersion(python, d)}`).join(", ");

const pgSchema = `bench_py_${process.pid}_${Date.now().toString(36)}`;
const pg = wanted.has("py-postgres") || wanted.has("js-postgres") ? postgresForBench(repoRoot, pgSchema) : undefined;

interface Plan extends BasePlan {
  postgres?: boolean;
}

function plans(): Plan[] {
  const py = `${PYTHON_FIXTURE}/langgraph.json`;
  const js = "examples/agent/langgraph.json";
  const list: Plan[] = [];
  if (wanted.has("py")) list.push({ label: "ours py (PGlite)", start: () => startOurs(repoRoot, "ours py (PGlite)", {}, py) });
  if (wanted.has("py-postgres") && pg) {
    list.push({
      label: "ours py (PostgreSQL)",
      postgres: true,
      start: () => startOurs(repoRoot, "ours py (PostgreSQL)", { databaseUrl: pg.databaseUrl, schema: `${pgSchema}_py` }, py),
    });
  }
  if (wanted.has("vendor")) list.push({ label: "vendor py", start: () => startVendorPython(repoRoot, python) });
  if (wanted.has("js")) list.push({ label: "ours js (PGlite)", start: () => startOurs(repoRoot, "ours js (PGlite)", {}, js) });
  if (wanted.has("js-postgres") && pg) {
    list.push({
      label: "ours js (PostgreSQL)",
      postgres: true,
      start: () => startOurs(repoRoot, "ours js (PostgreSQL)", { databaseUrl: pg.databaseUrl, schema: `${pgSchema}_js` }, js),
    });
  }
  return list;
}

async function main(): Promise<Column[]> {
  return measureInTurn(plans(), workload, (plan, target) => {
    const worker = target.cpuPid && target.label.startsWith("ours py") ? workerPidOf(target.cpuPid) : undefined;
    return {
      serverPid: target.cpuPid,
      postmasterPid: plan.postgres ? pg?.postmasterPid() : undefined,
      ...(worker ? { parts: { "python worker": worker } } : {}),
    };
  });
}

let columns: Column[];
let durability: string | undefined;
try {
  durability = pg ? await postgresDurability(pg.databaseUrl) : undefined;
  columns = await main();
} finally {
  await pg?.release();
}
console.log(`load average at the end: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
console.log(`Python packages: ${versions}`);
if (durability) console.log(`PostgreSQL: ${durability}`);
console.log(render(columns, workload.concurrency, workload.burst));
console.log(`\n${renderRatios(columns, workload.concurrency, workload.burst)}`);
console.log(`\n${renderPythonCpu(columns)}`);
if (flags.json) writeFileSync(flags.json, JSON.stringify({ workload, versions, durability, columns }, null, 2));
process.exitCode = columns.some((c) => c.result) ? 0 : 1;
