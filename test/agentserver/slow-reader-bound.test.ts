import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";
import { parseSseFrames, stalledReader, type SseFrame } from "../support/sse-frames.ts";

const FLOOD_CONFIG = fileURLToPath(new URL("../fixtures/flood/langgraph.json", import.meta.url));

/**
 * The limits are set lower than their defaults (50,000 and 10,000) through the
 * environment, so a run outgrows them in a tenth of the events: the same bounds, sooner.
 */
const BUFFERED = 5_000;
const READER_OWN = 1_000;
/** More than the broker keeps plus what one reader may hold of its own. */
const EVENTS = 12_000;
const EVENT_BYTES = 1_000;

/** The ids of the run's events among the frames (its metadata event is 0, the custom ones follow). */
const idsOf = (frames: SseFrame[]) => frames.filter((frame) => frame.id !== undefined).map((frame) => Number(frame.id));
const range = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);

describe.each(BACKENDS)("a reader that falls behind a run's stream (decision 0027), on %s", (backend) => {
  let agent: AgentProcess;
  let client: Client;
  let dataDir: string | undefined;

  beforeAll(async () => {
    const target = freshBackend(backend, "slowread");
    dataDir = target.dataDir ?? mkdtempSync(join(tmpdir(), "slipway-slowread-"));
    const storage = target.databaseUrl ? ["--database-url", target.databaseUrl, "--database-schema", target.schema] : ["--data-dir", dataDir];
    agent = await spawnAgent(["--config", FLOOD_CONFIG, "--no-rate-limit", ...storage], {
      SLIPWAY_STREAM_BUFFER_EVENTS: String(BUFFERED),
      SLIPWAY_STREAM_READER_EVENTS: String(READER_OWN),
    });
    client = new Client({ apiUrl: agent.url });
  }, 120_000);

  afterAll(async () => {
    await agent?.kill();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function floodWithStalledReader(resumable: boolean) {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "flood", {
      input: { events: EVENTS, bytes: EVENT_BYTES },
      streamMode: ["custom"],
      streamResumable: resumable,
      // The reader joins before the run starts, so it falls behind while it is joined.
      afterSeconds: 2,
    });
    const url = `${agent.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`;
    const reader = stalledReader(url, { "last-event-id": "-1" });
    expect((await reader.opened).statusCode).toBe(200);
    await client.runs.join(thread.thread_id, run.run_id);
    return { thread, run, frames: parseSseFrames(await reader.readAll()) };
  }

  it("without stored events: it gets what was held for it, in order, then an error event saying it fell behind", async () => {
    const { thread, run, frames } = await floodWithStalledReader(false);
    const ids = idsOf(frames);
    expect(ids).toEqual(range(0, ids.length));
    // Held for it: the broker's buffer (shared) and at most its own limit, beside what the socket took.
    expect(ids.length).toBeGreaterThanOrEqual(BUFFERED);
    expect(ids.length).toBeLessThan(EVENTS + 1);
    const last = frames[frames.length - 1]!;
    expect(last.event).toBe("error");
    const error = JSON.parse(last.data) as { error: string; message: string };
    expect(error.error).toBe("StreamFellBehind");
    expect(error.message).toContain(`after event ${ids.length - 1}`);
    expect(error.message).toContain("stream_resumable");
    console.log(`${backend}: the stalled reader got ${ids.length} of ${EVENTS + 1} events, then the error event`);

    // Joining again from its last event: the events after it are not held, and it is told so.
    const rejoined: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(ids.length - 1), streamMode: ["custom"] })) {
      rejoined.push(part);
    }
    expect(rejoined.map((part) => part.event)).toEqual(["error"]);
    expect((rejoined[0]!.data as { error: string }).error).toBe("StreamFellBehind");
  }, 180_000);

  it("with stored events: it gets the whole stream without a gap, and a rejoin past the broker's buffer gets the rest", async () => {
    const { thread, run, frames } = await floodWithStalledReader(true);
    expect(frames.filter((frame) => frame.event === "error")).toEqual([]);
    expect(idsOf(frames)).toEqual(range(0, EVENTS + 1));

    // Still within the broker's retention: the events after this one are not in its buffer, they are stored.
    const from = BUFFERED + READER_OWN - 1;
    const rejoined: number[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: String(from), streamMode: ["custom"] })) {
      expect(part.event).toBe("custom");
      rejoined.push((part.data as { index: number }).index);
    }
    expect(rejoined).toEqual(range(from, EVENTS - from));
  }, 180_000);

  it("a late join from the start of a run the broker's buffer holds gets every event, past one reader's own limit", async () => {
    const thread = await client.threads.create();
    // More than a reader may hold of its own, fewer than the broker keeps: all shared.
    const SHARED = 1_500;
    const run = await client.runs.create(thread.thread_id, "flood", { input: { events: SHARED, bytes: EVENT_BYTES }, streamMode: ["custom"] });
    await client.runs.join(thread.thread_id, run.run_id);
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1", streamMode: ["custom"] })) parts.push(part);
    expect(parts.filter((part) => part.event !== "custom").map((part) => part.event)).toEqual(["metadata"]);
    expect(parts.filter((part) => part.event === "custom").map((part) => (part.data as { index: number }).index)).toEqual(range(0, SHARED));
  }, 60_000);

  it("a stalled thread stream gets what was held for it, then an error event saying it fell behind", async () => {
    const thread = await client.threads.create();
    const reader = stalledReader(`${agent.url}/threads/${thread.thread_id}/stream`);
    expect((await reader.opened).statusCode).toBe(200);
    const run = await client.runs.create(thread.thread_id, "flood", { input: { events: EVENTS, bytes: EVENT_BYTES }, streamMode: ["custom"] });
    await client.runs.join(thread.thread_id, run.run_id);
    const frames = parseSseFrames(await reader.readAll());
    const ids = frames.filter((frame) => frame.id !== undefined).map((frame) => Number(frame.id!.split(":")[1]));
    expect(ids).toEqual(range(0, ids.length));
    expect(ids.length).toBeLessThan(EVENTS + 1);
    const last = frames[frames.length - 1]!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toMatchObject({ error: "StreamFellBehind" });
  }, 180_000);
});
