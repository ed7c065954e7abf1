import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";

/**
 * On a shared PostgreSQL database a process queues runs with the assistant it read
 * before, and the statement that queues each run checks that the assistant is still
 * what was read (migration 0024). Two agent servers on one schema stand for two
 * processes: one changes or deletes the assistant, the other creates runs with it.
 */
describe("assistants kept for runs on a shared database (postgres)", () => {
  const servers: RunningAgentServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function twoProcesses() {
    const target = freshBackend("postgres", "kept");
    const start = async () => {
      const server = await startAgentServer({
        configPath: FIXTURE_CONFIG,
        port: 0,
        host: "127.0.0.1",
        databaseUrl: target.databaseUrl,
        schema: target.schema,
        workers: 4,
        logLevel: "error",
      });
      servers.push(server);
      return { server, client: new Client({ apiUrl: server.url }) };
    };
    return { creator: await start(), editor: await start() };
  }

  /** Counts the statements of `server` that read an assistant, until `stop()`. */
  function countAssistantReads(server: RunningAgentServer): { count: () => number; stop: () => void } {
    const db = server.db as { query: (sql: string, params?: unknown[]) => Promise<unknown[]> };
    const query = db.query.bind(db);
    let count = 0;
    db.query = (sql, params) => {
      if (/FROM assistants WHERE assistant_id = \$1/.test(sql)) count++;
      return query(sql, params);
    };
    return { count: () => count, stop: () => void (db.query = query) };
  }

  it("reads an assistant once for its runs, and again when another process changed it", async () => {
    const { creator, editor } = await twoProcesses();
    const assistant = await creator.client.assistants.create({ graphId: "slow", metadata: { tier: "silver" } });
    const runOn = async () => {
      const thread = await creator.client.threads.create();
      return creator.client.runs.create(thread.thread_id, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 } });
    };

    const reads = countAssistantReads(creator.server);
    expect((await runOn()).metadata).toMatchObject({ tier: "silver" });
    expect((await runOn()).metadata).toMatchObject({ tier: "silver" });
    expect(reads.count()).toBe(1);

    await editor.client.assistants.update(assistant.assistant_id, { metadata: { tier: "gold" } });
    expect((await runOn()).metadata).toMatchObject({ tier: "gold" });
    expect(reads.count()).toBe(2);
    expect((await runOn()).metadata).toMatchObject({ tier: "gold" });
    expect(reads.count()).toBe(2);

    // Set back to the first version by the other process: a change again.
    await editor.client.assistants.setLatest(assistant.assistant_id, 1);
    expect((await runOn()).metadata).toMatchObject({ tier: "silver" });
    reads.stop();
  });

  it("answers 404 and queues nothing once another process deleted the assistant", async () => {
    const { creator, editor } = await twoProcesses();
    const assistant = await creator.client.assistants.create({ graphId: "slow" });
    const thread = await creator.client.threads.create();
    await creator.client.runs.wait(thread.thread_id, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 } });

    const runsOf = async () =>
      (await creator.server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE assistant_id = $1", [assistant.assistant_id]))[0].n;
    const before = await runsOf();
    await editor.client.assistants.delete(assistant.assistant_id);
    await expect(creator.client.runs.create(thread.thread_id, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 } })).rejects.toMatchObject({
      status: 404,
    });
    const stateless = creator.client.runs.wait(null, assistant.assistant_id, { input: { steps: 1, delay_ms: 1 } });
    await expect(stateless).rejects.toMatchObject({ status: 404 });
    expect(await runsOf()).toBe(before);
  });
});
