import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * langgraph.json `store.ttl` and `checkpointer.ttl`: items and threads that name no TTL
 * get the configured one, and the sweepers remove them once it runs out. TTLs of about a
 * second, so that the sweepers' work can be watched in the database.
 */
const GRAPHS = fileURLToPath(new URL("../fixtures/agents/src/graphs.ts", import.meta.url));
const SECOND_IN_MINUTES = 1 / 60;

function configFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-ttl-"));
  const file = join(dir, "langgraph.json");
  writeFileSync(
    file,
    JSON.stringify({
      graphs: { agent: `${GRAPHS}:agent` },
      store: { ttl: { default_ttl: SECOND_IN_MINUTES, refresh_on_read: false, sweep_interval_minutes: SECOND_IN_MINUTES / 2 } },
      checkpointer: { ttl: { strategy: "delete", default_ttl: SECOND_IN_MINUTES, sweep_interval_minutes: SECOND_IN_MINUTES / 2 } },
    }),
  );
  return file;
}

/** Polls until `check` holds (the sweepers run on their own clock), failing after `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(BACKENDS)("TTLs of langgraph.json on %s", (backend) => {
  let server: RunningAgentServer;
  let client: Client;
  const count = async (table: string) => (await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

  beforeAll(async () => {
    const target = freshBackend(backend, "ttl");
    server = await startAgentServer({
      configPath: configFile(),
      port: 0,
      host: "127.0.0.1",
      dataDir: target.dataDir,
      databaseUrl: target.databaseUrl,
      schema: target.schema,
      logLevel: "error",
    });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("store.ttl: an item without its own ttl expires and is swept; one with ttl null stays", async () => {
    await client.store.putItem(["ttl"], "short", { x: 1 });
    await client.store.putItem(["ttl"], "forever", { x: 2 }, { ttl: null });
    expect((await client.store.getItem(["ttl"], "short"))?.value).toEqual({ x: 1 });
    await eventually(async () => (await count("store_items")) === 1);
    expect(await client.store.getItem(["ttl"], "short")).toBeNull();
    expect((await client.store.getItem(["ttl"], "forever"))?.value).toEqual({ x: 2 });
  });

  it("checkpointer.ttl: threads created without a ttl, by POST /threads or by a run, get the default and are swept", async () => {
    const plain = await client.threads.create();
    const byRun = crypto.randomUUID();
    await client.runs.wait(byRun, "agent", { input: { messages: [{ role: "human", content: "hi" }] }, ifNotExists: "create" });
    const own = await client.threads.create({ ttl: { ttl: 60, strategy: "delete" } });
    await eventually(async () => {
      const statuses = await Promise.all(
        [plain.thread_id, byRun].map((id) =>
          client.threads.get(id).then(
            () => 200,
            (e: { status?: number }) => e.status,
          ),
        ),
      );
      return statuses.every((status) => status === 404);
    });
    // A thread with its own, longer ttl keeps it.
    expect((await client.threads.get(own.thread_id)).thread_id).toBe(own.thread_id);
    // Its checkpoints went with the swept threads.
    const left = await server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1", [byRun]);
    expect(left[0]!.n).toBe(0);
  });
});
