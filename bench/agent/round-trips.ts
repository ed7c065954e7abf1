/**
 * Statements and round trips per run: our agent server started in this process (so
 * its database drivers can be watched), then `RUNS` one-node runs of the bench graph
 * by create-thread + runs.wait, one at a time, and the database traffic counted; then
 * the same by 20 callers at once (`concurrent`: statements shared between runs count
 * once, as they cost once):
 *
 * - PGlite: every message the server thread posts to the database thread (one per
 *   statement, BEGIN and COMMIT included): a round trip each;
 * - PostgreSQL: every `pg` Client.query: a round trip each (we send no pipelines).
 *
 * Statements are counted by what they call (the first function or verb in the SQL),
 * so the table shows where the traffic goes. Run as a child of bench/agent.ts
 * (`node --import tsx bench/agent/round-trips.ts`); prints one JSON line.
 * Env: ROUND_TRIPS_RUNS (default 30), ROUND_TRIPS_DATABASE_URL, ROUND_TRIPS_SCHEMA.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { Client } from "@langchain/langgraph-sdk";
import { startAgentServer } from "../../src/agentserver/server.ts";

const runs = Number(process.env.ROUND_TRIPS_RUNS ?? 30);

/** What a statement does, for the breakdown: the function it calls or its verb and table. */
function kindOf(sql: string): string {
  const text = sql.replace(/\s+/g, " ").trim();
  const call = /\b(put_checkpoint|put_writes|checkpoint_tuple|finish_run|enqueue_run|put_step)\s*\(/i.exec(text);
  if (call) return call[1].toLowerCase();
  if (/^WITH candidate AS/i.test(text)) return "claim run";
  const verb = /^(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|BEGIN|COMMIT|ROLLBACK)\s*(\w*)/i.exec(text);
  return verb ? `${verb[1]} ${verb[2]}`.trim().toLowerCase() : text.slice(0, 30);
}

interface Count {
  roundTrips: number;
  byKind: Map<string, number>;
}
const counting: Count = { roundTrips: 0, byKind: new Map() };
let on = false;
const note = (kind: string) => {
  if (!on) return;
  counting.roundTrips++;
  counting.byKind.set(kind, (counting.byKind.get(kind) ?? 0) + 1);
};

// PGlite: the server talks to its database thread by postMessage.
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
  const m = message as { op?: string; sql?: string };
  if (m?.op === "query" && typeof m.sql === "string") note(kindOf(m.sql));
  else if (m?.op === "begin" || m?.op === "commit" || m?.op === "rollback") note(m.op);
  return (post as (...a: unknown[]) => void).call(this, message, ...rest);
} as typeof Worker.prototype.postMessage;

// PostgreSQL: every query a pooled client sends.
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  const text = typeof first === "string" ? first : (first?.text ?? "");
  note(kindOf(text));
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

async function measure(databaseUrl?: string) {
  const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), "slipway-roundtrips-"));
  const schema = databaseUrl ? (process.env.ROUND_TRIPS_SCHEMA ?? `roundtrips_${process.pid}`) : "slipway_agent";
  const server = await startAgentServer({
    configPath: "examples/agent/langgraph.json",
    port: 0,
    host: "127.0.0.1",
    dataDir,
    databaseUrl,
    schema,
    logLevel: "warn",
  });
  try {
    const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    const one = async (text: string) => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: text }] } });
    };
    for (let i = 0; i < 5; i++) await one(`warm-up ${i}`);
    counting.roundTrips = 0;
    counting.byKind.clear();
    on = true;
    for (let i = 0; i < runs; i++) await one(`hello ${i}`);
    on = false;
    const byKind = Object.fromEntries([...counting.byKind.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, n / runs]));
    const sequential = counting.roundTrips / runs;
    counting.roundTrips = 0;
    on = true;
    let next = 0;
    const total = runs * 5;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < total) await one(`together ${next++}`);
      }),
    );
    on = false;
    return { roundTripsPerRun: sequential, concurrentRoundTripsPerRun: counting.roundTrips / total, byKind };
  } finally {
    on = false;
    if (databaseUrl) await server.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

const result: Record<string, Awaited<ReturnType<typeof measure>>> = { PGlite: await measure() };
if (process.env.ROUND_TRIPS_DATABASE_URL) result.PostgreSQL = await measure(process.env.ROUND_TRIPS_DATABASE_URL);
console.log(JSON.stringify(result));
process.exit(0);
