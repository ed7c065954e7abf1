import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { openPglite } from "./pglite.ts";
import { openPostgres } from "./postgres.ts";

/**
 * During a rolling switch the old version's agent processes keep calling the stored
 * functions they were written against, on the schema the new version migrated. Decision
 * 0048: every version from migration 0022 on is supported (its calls, written below as
 * that code sends them, still work); signatures only older versions called are dropped.
 */
describe.each(BACKENDS)("stored functions older agent versions call (%s)", (backend) => {
  let db: Database | undefined;
  beforeAll(async () => {
    const target = freshBackend(backend, "older");
    db = target.databaseUrl ? await openPostgres(target.databaseUrl, target.schema, 2) : await openPglite(target.dataDir!, target.schema);
    await migrate(db, "agent");
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  const endRun = async (runId: string, threadId: string, worker: string) =>
    (
      await db!.query<{ owned: boolean }>(
        // Migrations 0009 to 0024's code: the twelve-argument finish_run, snapshot as jsonb.
        `SELECT finish_run($1, $2, 1, 'success', NULL::jsonb, $3, true, $4::jsonb, '{}'::jsonb, NULL::jsonb, 'idle', now()) AS owned`,
        [runId, worker, threadId, JSON.stringify({ second: 2, first: 1 })],
      )
    )[0]?.owned;

  it("the code of migrations 0022 and 0023 queues with the fourteen-argument jsonb enqueue_run and ends with the jsonb finish_run", async () => {
    const runId = randomUUID();
    const threadId = randomUUID();
    const queued = await db!.query<{ status: string; metadata: unknown }>(
      `SELECT status, metadata FROM enqueue_run($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb, $12, $13, $14)`,
      [
        runId,
        threadId,
        true,
        false,
        JSON.stringify({ graph_id: "g" }),
        randomUUID(),
        JSON.stringify({ run: 1 }),
        "{}",
        "enqueue",
        0,
        "{}",
        "worker-0022",
        30,
        null,
      ],
    );
    expect(queued).toEqual([{ status: "running", metadata: { graph_id: "g", run: 1 } }]);
    expect(await endRun(runId, threadId, "worker-0022")).toBe(true);
    const [thread] = await db!.query<{ status: string; values: unknown }>(`SELECT status, "values" FROM threads WHERE thread_id = $1`, [threadId]);
    expect(thread).toEqual({ status: "idle", values: { first: 1, second: 2 } });
  });

  it("the code of migration 0024 queues with the sixteen-argument jsonb enqueue_run, checking the assistant it read", async () => {
    const assistantId = randomUUID();
    const [assistant] = await db!.query<{ version: number; updated_at: Date }>(
      "INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'g', 'g') RETURNING version, updated_at",
      [assistantId],
    );
    const call = (runId: string, version: number) =>
      db!.query<{ status: string }>(
        `SELECT status FROM enqueue_run($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb, $12, $13, $14, $15, $16)`,
        [runId, randomUUID(), true, false, "{}", assistantId, "{}", "{}", "enqueue", 0, "{}", "worker-0024", 30, null, version, assistant!.updated_at],
      );
    const runId = randomUUID();
    expect(await call(runId, assistant!.version)).toEqual([{ status: "running" }]);
    await expect(call(randomUUID(), assistant!.version + 1)).rejects.toMatchObject({ code: "SWA01" });
  });

  it("signatures that only versions before 0022 called are gone", async () => {
    const exists = async (signature: string) => (await db!.query<{ found: boolean }>("SELECT to_regprocedure($1) IS NOT NULL AS found", [signature]))[0]?.found;
    // Dropped by 0025: queued by the code of 0007 to 0021.
    expect(await exists("enqueue_run(uuid, uuid, boolean, boolean, jsonb, uuid, jsonb, jsonb, text, float8)")).toBe(false);
    expect(await exists("enqueue_run(uuid, uuid, boolean, boolean, jsonb, uuid, jsonb, jsonb, text, float8, jsonb)")).toBe(false);
    // Dropped by 0027: the run's end before 0009, checkpoints written before 0020.
    expect(await exists("finish_run(uuid, text, integer, text, jsonb, uuid, jsonb, jsonb, jsonb, text, timestamptz)")).toBe(false);
    expect(await exists("put_checkpoint(text, text, text, text, jsonb, jsonb, text[], text[], text[], bytea[])")).toBe(false);
    expect(await exists("put_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[])")).toBe(false);
    // Still called by supported versions.
    expect(await exists("finish_run(uuid, text, integer, text, jsonb, uuid, boolean, jsonb, jsonb, jsonb, text, timestamptz)")).toBe(true);
    expect(await exists("enqueue_run(uuid, uuid, boolean, boolean, jsonb, uuid, jsonb, jsonb, text, float8, jsonb, text, float8, text)")).toBe(true);
  });
});
