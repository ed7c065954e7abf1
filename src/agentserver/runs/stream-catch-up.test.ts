import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../../test/support/backends.ts";
import { parseSseFrames, stalledReader } from "../../../test/support/sse-frames.ts";
import type { Database } from "../../storage/database.ts";
import { openDatabase } from "../../storage/open.ts";
import { StreamBroker } from "../stream/broker.ts";
import { runStreamReader } from "../stream/run-join.ts";
import { getRun, type RunRow } from "./repository.ts";
import { parseLastEventId, streamRun } from "./stream-response.ts";

/** More than the broker keeps (50,000), each large enough that a stalled client's socket fills. */
const EVENTS = 50_010;
const PAYLOAD = "x".repeat(200);

describe.each(BACKENDS)("a resumable reader's catch-up once the run's channel here is let go, on %s", (backend) => {
  let db: Database;
  let app: FastifyInstance;
  let url = "";
  // Short retention: the channel is gone by the time the stalled reader has read what it held.
  const broker = new StreamBroker({ retainMs: 20 });
  const runs = new Map<string, RunRow>();

  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    app = Fastify();
    app.get<{ Params: { run_id: string } }>("/runs/:run_id/stream", async (request, reply) => {
      const run = runs.get(request.params.run_id)!;
      await streamRun(request, reply, {
        db,
        streams: runStreamReader(broker),
        run,
        runPath: `/runs/${run.run_id}`,
        lastEventId: parseLastEventId(request.headers["last-event-id"]),
        fromStart: false,
      });
    });
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  /** A resumable run whose attempt stored none of its events, with `status` on its record. */
  async function runWith(status: string): Promise<RunRow> {
    const threadId = randomUUID();
    const runId = randomUUID();
    await db.query("INSERT INTO threads (thread_id) VALUES ($1)", [threadId]);
    await db.query("INSERT INTO runs (run_id, thread_id, assistant_id, status, kwargs) VALUES ($1, $2, $3, $4, $5::jsonb)", [
      runId,
      threadId,
      randomUUID(),
      status,
      JSON.stringify({ stream_resumable: true }),
    ]);
    const run = (await getRun(db, runId))!;
    runs.set(runId, run);
    return run;
  }

  /** A stalled reader joins from the start; the run ends with `end`; it reads once the channel is gone. */
  async function readAfterTheChannelIsGone(run: RunRow, end: () => void) {
    broker.open(run.run_id, run.thread_id, 1);
    for (let i = 0; i < EVENTS; i++) broker.publish(run.run_id, { event: "custom", data: { i, payload: PAYLOAD } });
    const reader = stalledReader(`${url}/runs/${run.run_id}/stream`, { "last-event-id": "-1" });
    expect((await reader.opened).statusCode).toBe(200);
    end();
    for (let i = 0; i < 100 && broker.stateOf(run.run_id) !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(broker.stateOf(run.run_id)).toBeUndefined();
    return parseSseFrames(await reader.readAll());
  }

  it("a run that ended with none of the events after the reader's last stored says so, instead of ending as if complete", async () => {
    const run = await runWith("success");
    const frames = await readAfterTheChannelIsGone(run, () => broker.end(run.run_id));
    expect(frames.filter((frame) => frame.event === "custom").length).toBe(50_000);
    const last = frames.at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toMatchObject({ error: "StreamFellBehind" });
    expect(JSON.parse(last.data).message).toContain("after event 49999");
  }, 60_000);

  it("a run that went on elsewhere ends the stream normally, for the client to join again where it goes on", async () => {
    const run = await runWith("pending");
    const frames = await readAfterTheChannelIsGone(run, () => broker.end(run.run_id, { attempt: 1, handedOver: true }));
    expect(frames.filter((frame) => frame.event === "custom").length).toBe(50_000);
    expect(frames.filter((frame) => frame.event === "error")).toEqual([]);
  }, 60_000);
});
