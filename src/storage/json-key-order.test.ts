import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend, type BackendTarget } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { migrate, splitStatements } from "./migrate.ts";
import { openPglite } from "./pglite.ts";
import { openPostgres } from "./postgres.ts";
import { getThread, searchThreads } from "../agentserver/threads/repository.ts";
import { enqueueRunFast } from "../agentserver/runs/queue-repository.ts";
import { loadRunEvents, persistRunEvents, readRunResult, saveRunResult } from "../agentserver/runs/repository.ts";

/**
 * Migration 0025 (decision 0031): the columns handed back to clients and graphs are
 * json, which keeps key order; `json_merge` merges in order; databases made before it
 * keep their rows and searches, and the SQL functions an older release calls still work.
 */
const FOLDER = fileURLToPath(new URL("./migrations/agent/", import.meta.url));
const sameText = (actual: unknown, expected: unknown) => expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));

async function openRaw(target: BackendTarget): Promise<Database> {
  return target.databaseUrl ? openPostgres(target.databaseUrl, target.schema, 2) : openPglite(target.dataDir!, target.schema);
}

/** The agent schema as the release before 0025 left it: every migration below `upTo`, recorded as migrate() records them. */
async function migrateBelow(db: Database, upTo: number): Promise<void> {
  await db.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
  for (const name of readdirSync(FOLDER)
    .filter((file) => /^\d{4}_.*\.sql$/.test(file))
    .sort()) {
    const version = Number(name.slice(0, 4));
    if (version >= upTo) continue;
    for (const statement of splitStatements(readFileSync(FOLDER + name, "utf8"))) await db.query(statement);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [version, name]);
  }
}

describe.each(BACKENDS)("json key order in storage (%s)", (backend) => {
  let db: Database | undefined;
  let old: Database | undefined;
  beforeAll(async () => {
    db = await openRaw(freshBackend(backend, "order"));
    await migrate(db, "agent");
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });
  afterEach(async () => {
    await old?.close();
    old = undefined;
  });

  it("json_merge keeps the first object's order, overrides in place and appends the rest in order", async () => {
    const merge = async (a: string | null, b: string | null) =>
      (await db!.query<{ merged: unknown }>("SELECT json_merge($1::json, $2::json) AS merged", [a, b]))[0]!.merged;
    sameText(await merge('{"type":"text","text":"hi"}', '{"zz":1,"type":"image","a":{"y":1,"x":2}}'), { type: "image", text: "hi", zz: 1, a: { y: 1, x: 2 } });
    sameText(await merge('{"b":1,"a":2}', null), { b: 1, a: 2 });
    sameText(await merge(null, '{"b":1,"a":2}'), { b: 1, a: 2 });
    sameText(await merge("{}", "{}"), {});
    sameText(await merge('{"b":1}', '{"b":null}'), { b: null });
  });

  it("keeps the order of a resumable run's kept events and of a stateless run's result", async () => {
    const threadId = randomUUID();
    const runId = randomUUID();
    await enqueueRunFast(db!, {
      run_id: runId,
      thread_id: threadId,
      assistant_id: randomUUID(),
      metadata: {},
      multitask_strategy: "enqueue",
      kwargs: { temporary: false } as never,
      afterSeconds: 0,
      newThread: true,
      threadMetadata: {},
      assistantMetadata: {},
    });
    const data = { type: "text", text: "hi", nested: [{ second: 2, first: 1 }] };
    await persistRunEvents(db!, runId, [{ id: 1, event: "values", data }]);
    const replayed = [];
    for await (const event of loadRunEvents(db!, runId, 0)) replayed.push(event);
    sameText(
      replayed.map((event) => event.data),
      [data],
    );
    await saveRunResult(db!, { run_id: runId, status: "success", values: data, error: null });
    sameText((await readRunResult(db!, runId))?.values, data);
  });

  it("upgrades a database made before it: rows stay readable and searchable, and the older release's function calls still work", async () => {
    const target = freshBackend(backend, "order");
    old = await openRaw(target);
    const db = old;
    await migrateBelow(db, 25);
    const threadId = randomUUID();
    const assistantId = randomUUID();
    await db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'echo', 'echo')`, [assistantId]);
    await db.query(`INSERT INTO threads (thread_id, metadata, "values") VALUES ($1, $2::jsonb, $3::jsonb)`, [
      threadId,
      JSON.stringify({ second: "b", first: "a" }),
      JSON.stringify({ messages: [{ type: "text", text: "old" }] }),
    ]);
    // 0025 and whatever came after it: this test is about 0025.
    expect((await migrate(db, "agent"))[0]).toBe(25);

    const thread = await getThread(db, threadId);
    expect(thread?.metadata).toEqual({ second: "b", first: "a" });
    expect(thread?.values).toEqual({ messages: [{ type: "text", text: "old" }] });
    const page = { limit: 10, offset: 0, sortBy: "created_at", sortOrder: "desc" as const };
    const found = await searchThreads(db, { metadata: { first: "a" }, values: { messages: [{ text: "old" }] } }, page);
    expect(found.map((row) => row.thread_id)).toEqual([threadId]);

    // The previous release queues with the sixteen-argument jsonb enqueue_run (0024, through 0022's)
    // and records a run's end with the twelve-argument jsonb finish_run (0009).
    const [assistant] = await db.query<{ version: number; updated_at: Date }>("SELECT version, updated_at FROM assistants WHERE assistant_id = $1", [
      assistantId,
    ]);
    const runId = randomUUID();
    const queued = await db.query<{ run_id: string; status: string; metadata: Record<string, unknown> }>(
      `SELECT run_id, status, metadata FROM enqueue_run($1, $2, false, false, $3::jsonb, $4, $5::jsonb, $6::jsonb, 'enqueue', 0, $7::jsonb, 'old-worker', 30, NULL, $8, $9)`,
      [runId, threadId, JSON.stringify({ graph_id: "echo" }), assistantId, JSON.stringify({ run: 1 }), "{}", "{}", assistant!.version, assistant!.updated_at],
    );
    expect(queued).toEqual([{ run_id: runId, status: "running", metadata: { second: "b", first: "a", graph_id: "echo", run: 1 } }]);
    const [finished] = await db.query<{ owned: boolean }>(
      `SELECT finish_run($1, 'old-worker', 1, 'success', NULL::jsonb, $2, true, $3::jsonb, '{}'::jsonb, NULL::jsonb, 'idle', now()) AS owned`,
      [runId, threadId, JSON.stringify({ messages: [] })],
    );
    expect(finished?.owned).toBe(true);
    expect((await getThread(db, threadId))?.values).toEqual({ messages: [] });
  });
});
