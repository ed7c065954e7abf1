import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";
import { queueRawRun } from "../support/raw-run.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";

/**
 * An attempt that fails before it ends its run (here: the database fails its read of
 * the assistant) leaves the run leased until the sweeper gives it another attempt, which
 * may run in another process. A stream joined in the failed attempt's process must then
 * follow that attempt there, not wait for ever on a channel that says the run executes here.
 */
const servers: RunningAgentServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Renames every overload of a function of the server's schema. */
async function renameFunctions(server: RunningAgentServer, from: string, to: string): Promise<void> {
  const rows = await server.db.query<{ signature: string }>(
    "SELECT oid::regprocedure::text AS signature FROM pg_proc WHERE proname = $1 AND pronamespace = current_schema()::regnamespace",
    [from],
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const { signature } of rows) await server.db.query(`ALTER FUNCTION ${signature} RENAME TO ${to}`);
}

/** Starts agent servers on one fresh PostgreSQL schema, each with short leases. */
function serversOnOneDatabase(): () => Promise<RunningAgentServer> {
  const target = freshBackend("postgres", "fail");
  return async () => {
    const server = await startAgentServer({
      configPath: FIXTURE_CONFIG,
      port: 0,
      host: "127.0.0.1",
      databaseUrl: target.databaseUrl,
      schema: target.schema,
      workers: 2,
      leaseSeconds: 1,
      logLevel: "silent",
    });
    servers.push(server);
    return server;
  };
}

/** The run's attempt and status, as recorded. */
async function recordOf(server: RunningAgentServer, runId: string): Promise<{ attempt: number; status: string }> {
  return (await server.db.query<{ attempt: number; status: string }>("SELECT attempt, status FROM runs WHERE run_id = $1", [runId]))[0]!;
}

describe("a stream joined where an attempt failed (two agent servers on one PostgreSQL)", () => {
  it("follows the run's next attempt in the other server to its end", async () => {
    const start = serversOnOneDatabase();
    const first = await start();
    const client = new Client({ apiUrl: first.url, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    // An assistant the server never read, so that its attempt reads it from the database,
    // and a database that fails that read (the table is not there under its name).
    const assistantId = crypto.randomUUID();
    await first.db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'agent', 'fresh')`, [assistantId]);
    await first.db.query("ALTER TABLE assistants RENAME TO assistants_away");
    const runId = crypto.randomUUID();
    await queueRawRun(first.db, { runId, threadId: thread.thread_id, assistantId, content: "after a failure" });

    // The first attempt is claimed here and fails; the run stays leased to it.
    const attemptOf = () => recordOf(first, runId);
    while ((await attemptOf()).attempt < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // This server takes no more runs: the next attempt is the other server's.
    first.drain();
    const events: Array<{ event: string; data: unknown }> = [];
    const joined = (async () => {
      for await (const part of client.runs.joinStream(thread.thread_id, runId)) events.push(part);
    })();

    await first.db.query("ALTER TABLE assistants_away RENAME TO assistants");
    const second = await start();
    await joined;
    const run = await attemptOf();
    expect(run.status).toBe("success");
    expect(run.attempt).toBeGreaterThanOrEqual(2);
    const values = events.filter((part) => part.event === "values").at(-1)?.data as { messages: Array<{ content: string }> } | undefined;
    expect(values?.messages.at(-1)?.content).toBe("You said: after a failure");
    expect(second.url).not.toBe(first.url);
  }, 60_000);

  it("follows it there too when the stream joined while the failed attempt still executed here", async () => {
    const start = serversOnOneDatabase();
    const first = await start();
    const client = new Client({ apiUrl: first.url, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 300, steps: 4 }, streamMode: ["values"] });
    const events: Array<{ event: string; data: unknown }> = [];
    let sawValues!: () => void;
    const executing = new Promise<void>((resolve) => (sawValues = resolve));
    const joined = (async () => {
      for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["values"] })) {
        events.push(part);
        if (part.event === "values") sawValues();
      }
    })();
    // Joined while the attempt executes here; then its end cannot be recorded (the function
    // that records it is away), so the attempt fails and the run stays leased to it.
    await executing;
    await renameFunctions(first, "finish_run", "finish_run_away");
    // This server takes no more runs: the next attempt is the other server's.
    first.drain();
    const attemptOf = () => recordOf(first, run.run_id);
    // The attempt tries to record its end for 1.3 s after the graph's 1.2 s, then fails.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect((await attemptOf()).attempt).toBe(1);
    await renameFunctions(first, "finish_run_away", "finish_run");
    await start();
    for (let i = 0; i < 200 && (await attemptOf()).status !== "success"; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const ended = await attemptOf();
    expect(ended.status).toBe("success");
    expect(ended.attempt).toBeGreaterThanOrEqual(2);
    // The run ended in the other server: the stream joined here ends too, with its output.
    const within = await Promise.race([
      joined.then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("still open 10 s after the run ended"), 10_000)),
    ]);
    expect(within).toBe("ended");
    expect((events.filter((part) => part.event === "values").at(-1)?.data as { steps?: number } | undefined)?.steps).toBe(0);
  }, 60_000);
});
