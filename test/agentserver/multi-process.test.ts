import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { startSharedPgliteHost, type SharedPgliteHost } from "../../src/storage/shared-pglite-host.ts";
import { freshBackend } from "../support/backends.ts";
import { collectWithin, FIXTURE_CONFIG } from "../support/agent-server.ts";
import { runDoneChannel, runsChannel, schemaChannel } from "../../src/agentserver/runs/announcements.ts";

/**
 * Two agent servers on one database, as several processes of one deployment would be:
 * on a PostgreSQL schema, and on an embedded database that a host process shares (a
 * deployment's old and new revision on the control plane's embedded default). The front
 * server has no workers, so every run it accepts executes in the other one and its
 * waiters learn the end through the database.
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

async function postgresStorage(): Promise<Storage> {
  const target = freshBackend("postgres", "mp");
  return { databaseUrl: target.databaseUrl, schema: target.schema };
}

async function sharedEmbeddedStorage(): Promise<Storage> {
  const dir = mkdtempSync(join(tmpdir(), "slipway-mp-shared-"));
  freshBackend("pglite", "mp"); // sets the template path for the host's new cluster
  const host = await startSharedPgliteHost({ dataDir: join(dir, "db"), schema: "deployment", socketPath: join(dir, "db.sock") });
  hosts.push({ host, dir });
  return { storageSocket: host.socketPath, schema: host.schema };
}

async function pairOn(storage: Storage) {
  const start = (workers: number) => startAgentServer({ configPath: FIXTURE_CONFIG, port: 0, host: "127.0.0.1", ...storage, workers, logLevel: "error" });
  const worker = await start(2);
  servers.push(worker);
  const front = await start(0);
  servers.push(front);
  return { front: new Client({ apiUrl: front.url }), worker: new Client({ apiUrl: worker.url }), workerUrl: worker.url, db: front.db, schema: storage.schema };
}

const input = (text: string) => ({ messages: [{ role: "human", content: text }] });
const lastText = (values: unknown) => (values as { messages?: Array<{ content: string }> } | undefined)?.messages?.at(-1)?.content;

describe.each([
  ["PostgreSQL", postgresStorage],
  ["a shared embedded database", sharedEmbeddedStorage],
])("two agent servers sharing %s", (_name, storage) => {
  const pair = async () => pairOn(await storage());

  it("answers /runs/wait with the stateless run's values when another process ran it", async () => {
    const { front } = await pair();
    for (let i = 0; i < 3; i++) {
      const values = await front.runs.wait(null, "agent", { input: input(`stateless ${i}`) });
      expect(lastText(values)).toBe(`You said: stateless ${i}`);
    }
  });

  it("answers a thread's /runs/wait and keeps enqueue order across processes", async () => {
    const { front, worker } = await pair();
    const thread = await front.threads.create();
    const first = await front.runs.create(thread.thread_id, "agent", { input: input("one") });
    const values = await front.runs.wait(thread.thread_id, "agent", { input: input("two") });
    expect((values as { messages: unknown[] }).messages.map((m) => (m as { content: string }).content)).toEqual([
      "one",
      "You said: one",
      "two",
      "You said: two",
    ]);
    expect((await worker.runs.get(thread.thread_id, first.run_id)).status).toBe("success");
  });

  it("streams a run created here and executed by the other process, in every mode asked", async () => {
    const { front } = await pair();
    const thread = await front.threads.create();
    const parts = await collectWithin((signal) =>
      front.runs.stream(thread.thread_id, "agent", { input: input("relayed"), streamMode: ["values", "updates", "messages-tuple"], signal }),
    );
    const events = parts.map((part) => part.event);
    expect(events[0]).toBe("metadata");
    expect(events).toContain("updates");
    expect(events.filter((event) => event.startsWith("messages")).length).toBeGreaterThan(1);
    const values = parts.filter((part) => part.event === "values").at(-1)?.data;
    expect(lastText(values)).toBe("You said: relayed");

    // A threadless stream too.
    const stateless = await collectWithin((signal) => front.runs.stream(null, "agent", { input: input("no thread"), streamMode: "updates", signal }));
    expect(stateless.map((part) => part.event)).toEqual(["metadata", "updates"]);
  });

  it("joins, from this process, the stream of a run executing in the other, with the same event ids", async () => {
    const { front, worker, workerUrl } = await pair();
    const thread = await front.threads.create();
    const run = await worker.runs.create(thread.thread_id, "slow", {
      input: { delay_ms: 150, steps: 3 },
      streamMode: ["values", "updates"],
      streamResumable: true,
    });
    const joined = await collectWithin((signal) => front.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["values", "updates"], signal }));
    expect(joined.filter((part) => part.event === "values").at(-1)?.data).toEqual(expect.objectContaining({ steps: 0 }));

    // Ids match the executing process's: resuming after an id, on either server, gives the same rest.
    const all = await fetch(`${workerUrl}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, { headers: { "Last-Event-ID": "-1" } });
    const ids = [...(await all.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids.length).toBeGreaterThan(3);
    const rest = async (client: Client) =>
      (
        await collectWithin((signal) =>
          client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(ids[1]), streamMode: ["values", "updates"], signal }),
        )
      ).map((part) => JSON.stringify(part));
    expect(await rest(front)).toEqual(await rest(worker));
  });

  it("resumes here, after the last event a client read from the executing process, with nothing repeated", async () => {
    const { front, worker } = await pair();
    const thread = await front.threads.create();
    const run = await worker.runs.create(thread.thread_id, "slow", {
      input: { delay_ms: 300, steps: 4 },
      streamMode: ["values", "updates"],
      streamResumable: true,
    });
    // The client reads the first events from the executing process, then its connection drops.
    const leaving = new AbortController();
    const first: string[] = [];
    try {
      for await (const part of worker.runs.joinStream(thread.thread_id, run.run_id, {
        lastEventId: "-1",
        streamMode: ["values", "updates"],
        signal: leaving.signal,
      })) {
        first.push(String((part as { id?: string }).id));
        if (first.length === 3) leaving.abort();
      }
    } catch (error) {
      if (!leaving.signal.aborted) throw error;
    }
    expect(first).toEqual(["0", "1", "2"]);
    // It joins again through this process, which held nothing of the run: the rest, once each.
    const rest = await collectWithin((signal) =>
      front.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "2", streamMode: ["values", "updates"], signal }),
    );
    const ids = rest.map((part) => Number((part as { id?: string }).id));
    expect(ids.length).toBeGreaterThan(2);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => 3 + index));
  });

  it("carries, on a thread stream here, every run of its thread executing in the other process", async () => {
    const { front, worker } = await pair();
    const thread = await front.threads.create();
    // Active when the stream opens; then one run queued by each server.
    const first = await worker.runs.create(thread.thread_id, "slow", { input: { delay_ms: 300, steps: 1 } });
    const parts: Array<{ event: string; data: unknown }> = [];
    const abort = new AbortController();
    const listening = (async () => {
      try {
        for await (const part of front.threads.joinStream(thread.thread_id, { signal: abort.signal })) parts.push(part as { event: string; data: unknown });
      } catch {
        // aborted below
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await worker.runs.create(thread.thread_id, "agent", { input: input("from the worker") });
    const third = await front.runs.create(thread.thread_id, "agent", { input: input("from the front") });
    await front.runs.join(thread.thread_id, third.run_id);
    const lastValues = () => parts.filter((part) => part.event === "values").at(-1)?.data;
    for (let waited = 0; waited < 8_000 && lastText(lastValues()) !== "You said: from the front"; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    abort.abort();
    // The SDK's iterator may wait for the next chunk before it notices the abort.
    await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    const started = parts.filter((part) => part.event === "metadata").map((part) => (part.data as { run_id: string }).run_id);
    expect(started).toEqual([first.run_id, second.run_id, third.run_id]);
    expect(lastText(lastValues())).toBe("You said: from the front");
  });

  it("relays an event larger than one notification (8000 bytes) whole", async () => {
    const { front } = await pair();
    const thread = await front.threads.create();
    const big = `${"é".repeat(12_000)}${"😀".repeat(3_000)}${"x".repeat(9_000)}`;
    const parts = await collectWithin((signal) => front.runs.stream(thread.thread_id, "agent", { input: input(big), streamMode: "values", signal }));
    const values = parts.filter((part) => part.event === "values").at(-1)?.data;
    expect(lastText(values)).toBe(`You said: ${big}`);
  });
});

describe("two agent servers sharing PostgreSQL", () => {
  const pair = async () => pairOn(await postgresStorage());

  it("answers a waiter whose run ended while its notification connection was down", async () => {
    const { front, db, schema } = await pair();
    const thread = await front.threads.create();
    const waiting = front.runs.wait(thread.thread_id, "slow", { input: { delay_ms: 400, steps: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Both servers lose their LISTEN connection (they come back after ~0.5 s); the run
    // ends in the other server meanwhile, so its "done" notification is lost to us.
    const killed = await db.query<{ ok: boolean }>("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1", [
      `slipway-listen:${schema}`,
    ]);
    expect(killed.length).toBe(2);
    const outcome = await Promise.race([waiting.then((values) => ({ values })), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 8_000))]);
    expect(outcome).toEqual({ values: expect.objectContaining({ steps: 0 }) });
  });

  it("replays, from this process, a run created here that ended in the other while this one's notifications were down", async () => {
    const { front, worker, db, schema } = await pair();
    const thread = await front.threads.create();
    const run = await front.runs.create(thread.thread_id, "slow", { input: { delay_ms: 300, steps: 2 }, streamMode: ["values"], streamResumable: true });
    // The notification connections are cut again and again until the run ended, so its
    // "done" notification is lost to this process.
    let kills = 0;
    while ((await worker.runs.get(thread.thread_id, run.run_id)).status !== "success") {
      const killed = await db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [`slipway-listen:${schema}`]);
      kills += killed.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(kills).toBeGreaterThan(0);
    // Both come back (after ~0.5 s).
    await new Promise((resolve) => setTimeout(resolve, 1_200));

    // The channel this process opened for the run never heard its end: a join still gets
    // the whole run and ends.
    const replayed = await collectWithin((signal) =>
      front.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1", streamMode: ["values"], signal }),
    );
    expect(replayed[0]?.event).toBe("metadata");
    expect(replayed.filter((part) => part.event === "values").at(-1)?.data).toEqual(expect.objectContaining({ steps: 0 }));
  });

  it("keeps the notifications of another deployment's schema on the same server apart", async () => {
    const { front, db, schema } = await pair();
    const other = freshBackend("postgres", "mp").schema;
    const heard: string[] = [];
    const stops = await Promise.all([
      db.listen(runsChannel(schema), () => heard.push("own runs")),
      db.listen(runDoneChannel(schema), () => heard.push("own done")),
      db.listen(runsChannel(other), () => heard.push("other runs")),
      db.listen(runDoneChannel(other), () => heard.push("other done")),
    ]);
    try {
      const thread = await front.threads.create();
      await front.runs.wait(thread.thread_id, "agent", { input: input("mine") });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toContain("own runs");
      expect(heard).toContain("own done");
      expect(heard.filter((what) => what.startsWith("other"))).toEqual([]);
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
    // Long schema names still give a valid channel name (63 bytes at most), one per schema.
    const long = (suffix: string) => schemaChannel("slipway_run_cancel", `${"s".repeat(60)}_${suffix}`);
    expect(long("a").length).toBeLessThanOrEqual(63);
    expect(long("a")).not.toBe(long("b"));
  });
});
