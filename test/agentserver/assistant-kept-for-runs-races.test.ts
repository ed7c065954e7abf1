import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { startSharedPgliteHost, type SharedPgliteHost } from "../../src/storage/shared-pglite-host.ts";
import { freshBackend } from "../support/backends.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";

/**
 * Decision 0024 from the other side: another process changes the assistant while a run
 * is being created with the copy this process kept. Two agent servers on one database
 * (a PostgreSQL schema, or an embedded database shared over the host's socket) stand for
 * two processes. The other process's write is made at a chosen moment: right after this
 * process read the assistant again, before it queues the run a second time.
 */
const servers: RunningAgentServer[] = [];
const hosts: Array<{ host: SharedPgliteHost; dir: string }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  for (const { host, dir } of hosts.splice(0)) {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

type Storage = { databaseUrl?: string; storageSocket?: string; schema: string };

function postgresStorage(): Storage {
  const target = freshBackend("postgres", "kr");
  return { databaseUrl: target.databaseUrl, schema: target.schema };
}

async function sharedEmbeddedStorage(): Promise<Storage> {
  const dir = mkdtempSync(join(tmpdir(), "slipway-kr-shared-"));
  freshBackend("pglite", "kr"); // sets the template path for the host's new cluster
  const host = await startSharedPgliteHost({ dataDir: join(dir, "db"), schema: "deployment", socketPath: join(dir, "db.sock") });
  hosts.push({ host, dir });
  return { storageSocket: host.socketPath, schema: host.schema };
}

async function twoProcesses(storage: Storage, workers = { creator: 2, editor: 2 }) {
  const start = async (count: number) => {
    const server = await startAgentServer({ configPath: FIXTURE_CONFIG, port: 0, host: "127.0.0.1", ...storage, workers: count, logLevel: "error" });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url }) };
  };
  return { creator: await start(workers.creator), editor: await start(workers.editor) };
}

/** Runs `after` once, when `server` next reads an assistant by id, before the read answers. */
function onNextAssistantRead(server: RunningAgentServer, after: () => Promise<unknown>): void {
  const db = server.db as { query: (sql: string, params?: unknown[]) => Promise<unknown[]> };
  const query = db.query.bind(db);
  db.query = async (sql, params) => {
    const rows = await query(sql, params);
    if (/FROM assistants WHERE assistant_id = \$1$/.test(sql)) {
      db.query = query;
      await after();
    }
    return rows;
  };
}

/** POST without the SDK, which would retry a 500 and hide it. */
async function createRun(server: RunningAgentServer, threadId: string, assistantId: string) {
  const response = await fetch(`${server.url}/threads/${threadId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: assistantId, input: { steps: 1, delay_ms: 1 } }),
  });
  return { status: response.status, body: await response.json() };
}

describe.each([
  ["PostgreSQL", postgresStorage],
  ["a shared embedded database", sharedEmbeddedStorage],
])("assistants kept for runs, changed meanwhile, on %s", (_name, storage) => {
  it("sees another process's change on the next run", async () => {
    const { creator, editor } = await twoProcesses(await storage());
    const assistant = await creator.client.assistants.create({ graphId: "slow", metadata: { tier: "silver" } });
    const thread = await creator.client.threads.create();
    const run = () => creator.client.runs.create(thread.thread_id, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 }, multitaskStrategy: "enqueue" });
    expect((await run()).metadata).toMatchObject({ tier: "silver" });
    await editor.client.assistants.update(assistant.assistant_id, { metadata: { tier: "gold" } });
    expect((await run()).metadata).toMatchObject({ tier: "gold" });
  });

  it("queues the run when the assistant changes again between the second read and the second queueing", async () => {
    const { creator, editor } = await twoProcesses(await storage());
    const assistant = await creator.client.assistants.create({ graphId: "slow", metadata: { tier: "silver" } });
    const thread = await creator.client.threads.create();
    expect((await createRun(creator.server, thread.thread_id, assistant.assistant_id)).status).toBe(200);
    await editor.client.assistants.update(assistant.assistant_id, { metadata: { tier: "gold" } });
    onNextAssistantRead(creator.server, () => editor.client.assistants.update(assistant.assistant_id, { metadata: { tier: "platinum" } }));

    const created = await createRun(creator.server, thread.thread_id, assistant.assistant_id);
    expect(created).toMatchObject({ status: 200, body: { metadata: { tier: "gold" } } });
    // The next run checks what was read, finds it changed, and reads the newest.
    expect((await createRun(creator.server, thread.thread_id, assistant.assistant_id)).body.metadata).toMatchObject({ tier: "platinum" });
  });

  // Deleted after the second read: concurrent with the run, which is queued as it was before
  // decision 0024 (and as the transaction path does), not a 500.
  it("queues the run when the assistant is deleted between the second read and the second queueing", async () => {
    const { creator, editor } = await twoProcesses(await storage());
    const assistant = await creator.client.assistants.create({ graphId: "slow" });
    const thread = await creator.client.threads.create();
    expect((await createRun(creator.server, thread.thread_id, assistant.assistant_id)).status).toBe(200);
    await editor.client.assistants.update(assistant.assistant_id, { metadata: { tier: "gold" } });
    onNextAssistantRead(creator.server, () => editor.client.assistants.delete(assistant.assistant_id));

    const created = await createRun(creator.server, thread.thread_id, assistant.assistant_id);
    expect(created).toMatchObject({ status: 200, body: { metadata: { tier: "gold" } } });
    // Gone before the next run's read: 404.
    expect((await createRun(creator.server, thread.thread_id, assistant.assistant_id)).status).toBe(404);
  });

  it("keeps a row whose updated_at has microseconds (written by SQL) without reading it again", async () => {
    const { creator } = await twoProcesses(await storage());
    const id = "0b9a1f3e-5c4d-4e2f-8a6b-7c8d9e0f1a2b";
    await creator.server.db.query(
      "INSERT INTO assistants (assistant_id, graph_id, name, updated_at) VALUES ($1, 'slow', 'raw', '2026-03-04 05:06:07.891999+00')",
      [id],
    );
    const thread = await creator.client.threads.create();
    let reads = 0;
    const db = creator.server.db as { query: (sql: string, params?: unknown[]) => Promise<unknown[]> };
    const query = db.query.bind(db);
    db.query = (sql, params) => {
      if (/FROM assistants WHERE assistant_id = \$1$/.test(sql)) reads++;
      return query(sql, params);
    };
    for (let i = 0; i < 3; i++) {
      const created = await createRun(creator.server, thread.thread_id, id);
      expect(created.status).toBe(200);
      // Each run ends before the next: a run queued on a busy thread takes the transaction
      // path, which reads the assistant afresh by design (decision 0024), and a loaded
      // machine let the previous one still run.
      await creator.client.runs.join(thread.thread_id, created.body.run_id);
    }
    db.query = query;
    expect(reads).toBe(1);
  });

  it("gives back the worker it reserved when the first queueing finds the assistant changed", async () => {
    // One worker, and none in the other process: a reservation not given back would leave
    // no room to claim the next run, and its wait would never end.
    const { creator, editor } = await twoProcesses(await storage(), { creator: 1, editor: 0 });
    const assistant = await creator.client.assistants.create({ graphId: "slow" });
    const thread = await creator.client.threads.create();
    for (let i = 0; i < 3; i++) {
      await editor.client.assistants.update(assistant.assistant_id, { metadata: { round: i } });
      const run = await creator.client.runs.create(thread.thread_id, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 } });
      expect(run.metadata).toMatchObject({ round: i });
      await creator.client.runs.join(thread.thread_id, run.run_id);
      expect((await creator.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    }
  });
});

describe("assistants kept for runs on PostgreSQL, changed while the run waits for its thread", () => {
  it("refuses a run whose assistant another process deleted while the queueing statement waited for the thread's lock", async () => {
    const storage = postgresStorage();
    const { creator, editor } = await twoProcesses(storage);
    const assistant = await creator.client.assistants.create({ graphId: "slow" });
    const thread = await creator.client.threads.create();
    expect((await createRun(creator.server, thread.thread_id, assistant.assistant_id)).status).toBe(200);
    await creator.client.runs.join(thread.thread_id, (await creator.client.runs.list(thread.thread_id))[0].run_id);

    // A third connection holds the thread's row, as a concurrent writer would.
    const pg = (await import("pg")).default;
    const holder = new pg.Client({ connectionString: storage.databaseUrl });
    await holder.connect();
    try {
      await holder.query(`SET search_path TO "${storage.schema}"`);
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [thread.thread_id]);
      const creating = createRun(creator.server, thread.thread_id, assistant.assistant_id);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the queueing statement now waits for the lock
      await editor.client.assistants.delete(assistant.assistant_id);
      await holder.query("COMMIT");
      const answer = await creating;
      expect(answer.status).toBe(404);
    } finally {
      await holder.end();
    }
    const runs = await creator.server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE thread_id = $1", [thread.thread_id]);
    expect(runs[0].n).toBe(1);
  });
});
