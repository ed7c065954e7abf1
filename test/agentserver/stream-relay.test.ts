import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { runDoneChannel, streamChannel } from "../../src/agentserver/runs/announcements.ts";
import { RunCompletion } from "../../src/agentserver/runs/completion.ts";
import { StreamBroker } from "../../src/agentserver/stream/broker.ts";
import type { RunEvent } from "../../src/agentserver/stream/run-streams.ts";
import { StreamRelay } from "../../src/agentserver/stream/relay.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * The relay between processes, driven directly: each "process" is a database connection,
 * a broker and a relay of its own on one PostgreSQL schema, and the test publishes the
 * executing process's events itself, so the order of events on the wire is known.
 */
describe("stream relay between processes on one PostgreSQL", () => {
  const nodes: Array<{ db: Database; relay: StreamRelay }> = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) {
      await node.relay.close();
      await node.db.close();
    }
  });

  async function cluster(size: number, options: { silenceMs?: number; wantTtlMs?: number } = {}) {
    const target = freshBackend("postgres", "relay");
    const made = [];
    for (let i = 0; i < size; i++) {
      const db = await openDatabase({ databaseUrl: target.databaseUrl, schema: target.schema, component: "agent", poolSize: 2 });
      const broker = new StreamBroker();
      const completion = new RunCompletion(db);
      await completion.start();
      const relay = new StreamRelay(db, streamChannel(db.schema), broker, completion, {
        askEveryMs: 100,
        endGraceMs: 400,
        gapPatienceMs: 3_000,
        silenceMs: 300,
        ...options,
      });
      await relay.start();
      nodes.push({ db, relay });
      made.push({ db, broker, completion, relay, schema: target.schema });
    }
    return made;
  }

  /** A stream of `runId` held in a process that does not execute it, as stream-response.ts opens one. */
  function followStream(node: { broker: StreamBroker; relay: StreamRelay }, runId: string) {
    node.broker.follow(runId, THREAD);
    const stopRelay = node.relay.follow(runId);
    const events: RunEvent[] = [];
    let ended = false;
    node.broker.subscribe(runId, { afterId: 0, replay: true }, (event) => {
      if (event === "end") {
        ended = true;
        stopRelay();
      } else events.push(event);
    });
    return { events, isEnded: () => ended };
  }

  /** A run executing in one process, with its first event, followed by a stream in another. */
  async function followedRun() {
    const [executor, follower] = await cluster(2);
    const runId = randomUUID();
    executor.broker.open(runId, THREAD, 1);
    executor.broker.publish(runId, { event: "metadata", data: {} });
    const stream = followStream(follower, runId);
    await until(() => stream.events.length === 1);
    return { executor, follower, runId, stream };
  }

  const shape = (events: RunEvent[]) => events.map((event) => `${event.id}:${event.event}:${JSON.stringify(event.data)}`);

  it("gives a follower every event in order when a live one reaches it before the answer to its ask", async () => {
    const [executor, first, late] = await cluster(3);
    const runId = randomUUID();
    executor.broker.open(runId, THREAD, 1);
    for (let i = 1; i <= 5; i++) executor.broker.publish(runId, { event: "updates", data: { n: i } });
    const early = followStream(first, runId);
    await until(() => early.events.length === 5);

    // The executor forwards to `first` already: event 6 goes out before `late`'s ask
    // reaches it, so `late` hears 6 before the replay of 1..6.
    const joined = followStream(late, runId);
    executor.broker.publish(runId, { event: "updates", data: { n: 6 } });
    await until(() => joined.events.length >= 6);
    executor.broker.publish(runId, { event: "values", data: { n: 7 } });
    executor.broker.end(runId);
    await until(() => joined.isEnded() && early.isEnded());

    const all = executor.broker.eventsAfter(runId, 0);
    expect(shape(joined.events)).toEqual(shape(all));
    expect(shape(early.events)).toEqual(shape(all));
  });

  it("keeps a follower's stream open when the run goes back to the queue, and goes on with the next attempt in another process", async () => {
    const [stopping, taking, follower] = await cluster(3);
    const runId = randomUUID();
    stopping.broker.open(runId, THREAD, 1);
    stopping.broker.publish(runId, { event: "metadata", data: { attempt: 1 } });
    stopping.broker.publish(runId, { event: "updates", data: { step: "a" } });
    const stream = followStream(follower, runId);
    await until(() => stream.events.length === 2);

    // Shutdown of the executing process: the run is handed back to the queue.
    stopping.broker.end(runId, { attempt: 1, handedOver: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stream.isEnded()).toBe(false);

    taking.broker.open(runId, THREAD, 2);
    taking.broker.publish(runId, { event: "metadata", data: { attempt: 2 } });
    taking.broker.publish(runId, { event: "updates", data: { step: "b" } });
    await until(() => stream.events.length === 4);
    taking.broker.publish(runId, { event: "values", data: { done: true } });
    taking.broker.end(runId);
    await until(() => stream.isEnded());
    expect(shape(stream.events)).toEqual([
      '1:metadata:{"attempt":1}',
      '2:updates:{"step":"a"}',
      '3:metadata:{"attempt":2}',
      '4:updates:{"step":"b"}',
      '5:values:{"done":true}',
    ]);
  });

  it("asks again after a silence, and follows the retry in another process when its executor died without a word", async () => {
    const [dying, taking, follower] = await cluster(3, { silenceMs: 300, wantTtlMs: 200 });
    const runId = randomUUID();
    dying.broker.open(runId, THREAD, 1);
    dying.broker.publish(runId, { event: "metadata", data: { attempt: 1 } });
    const stream = followStream(follower, runId);
    await until(() => stream.events.length === 1);

    // The executor's process is gone (no "end" sent); long after the follower last
    // asked, the sweeper of another process requeues the run and that process claims it.
    await dying.relay.close();
    await new Promise((resolve) => setTimeout(resolve, 600));
    taking.broker.open(runId, THREAD, 2);
    taking.broker.publish(runId, { event: "metadata", data: { attempt: 2 } });
    taking.broker.publish(runId, { event: "values", data: { done: true } });
    await until(() => stream.events.length === 3);
    taking.broker.end(runId);
    await until(() => stream.isEnded());
    expect(shape(stream.events)).toEqual(['1:metadata:{"attempt":1}', '2:metadata:{"attempt":2}', '3:values:{"done":true}']);
  });

  it('answers a follower\'s ask with "here" while the run executes with nothing new, so the follower stops asking', async () => {
    const { executor, follower, runId, stream } = await followedRun();
    const asks: string[] = [];
    await follower.db.listen(executor.relay.channel, (payload) => {
      if (payload.includes('"k":"w"')) asks.push(payload);
    });
    // The follower (silenceMs 300) asks after each silence; the executor answers "here".
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(asks.length).toBeGreaterThan(0);
    // Asking every 100 ms unanswered would make 15 asks; answered, one per silence.
    expect(asks.length).toBeLessThanOrEqual(6);
    executor.broker.publish(runId, { event: "values", data: { n: 1 } });
    await until(() => stream.events.length === 2);
  });

  it("says when what it queued went out, so a run's end is announced after its last events", async () => {
    const { executor, follower, runId: busy } = await followedRun();
    const ending = randomUUID();
    executor.broker.open(ending, THREAD, 1);
    executor.broker.publish(ending, { event: "metadata", data: {} });
    const stream = followStream(follower, ending);
    await until(() => stream.events.length === 1);

    const heard: string[] = [];
    const record = (kind: string) => (payload: string) => {
      if (payload.includes(ending)) heard.push(kind === "done" ? "done" : (JSON.parse(payload) as { k: string }).k);
    };
    await follower.db.listen(executor.relay.channel, record("relay"));
    await follower.db.listen(runDoneChannel(executor.schema), record("done"));

    // A backlog of another run's events is on its way when this run ends.
    for (let i = 0; i < 2_000; i++) executor.broker.publish(busy, { event: "messages", data: { i, text: "x".repeat(200) } });
    executor.broker.publish(ending, { event: "values", data: { done: true } });
    executor.broker.end(ending);
    await executor.relay.sent();
    await executor.completion.announce(ending);
    await until(() => heard.includes("done"));
    // Asks and "here" answers about the run may come too (under load); what matters is
    // that its last event and its end came before the announcement.
    const beforeDone = heard.slice(0, heard.indexOf("done"));
    expect(beforeDone).toContain("e");
    expect(beforeDone).toContain("x");
    await until(() => stream.isEnded());
    expect(stream.events).toHaveLength(2);
  });

  it("ends a followed stream whose run is recorded as ended when its end was never heard, after the tail", async () => {
    const { executor, follower, runId, stream } = await followedRun();
    executor.broker.publish(runId, { event: "values", data: { last: true } });
    // The executor is gone without a word, and the "done" notification was lost too.
    await executor.relay.close();
    await until(() => stream.events.length === 2);
    // A stream opened later reads the run's record as ended (stream-response.ts).
    follower.broker.endFollowed(runId);
    await until(() => stream.isEnded());
    expect(follower.broker.stateOf(runId)).toBe("ended");

    // A channel that no stream follows (a run created here) ends at once.
    const unstreamed = randomUUID();
    follower.broker.follow(unstreamed, THREAD);
    follower.broker.endFollowed(unstreamed);
    expect(follower.broker.stateOf(unstreamed)).toBe("ended");
  });

  it("lets the tail through after the run is recorded as ended, and ends a follower whose executor went silent", async () => {
    const { executor, runId, stream } = await followedRun();

    // The end is announced while events still come for longer than the grace period (400 ms).
    await executor.completion.announce(runId);
    for (let i = 0; i < 8; i++) {
      executor.broker.publish(runId, { event: "updates", data: { n: i } });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(stream.isEnded()).toBe(false);
    expect(stream.events).toHaveLength(9);

    // Now the executor says nothing more (no "end" either): the follower still ends.
    await until(() => stream.isEnded());
  });

  it("asks again after its notification connection came back, and gets the events sent meanwhile", async () => {
    const { executor, runId, stream } = await followedRun();

    const killed = await executor.db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [
      `slipway-listen:${executor.schema}`,
    ]);
    expect(killed.length).toBe(2);
    executor.broker.publish(runId, { event: "updates", data: { lost: 1 } });
    executor.broker.publish(runId, { event: "updates", data: { lost: 2 } });
    // No later event comes to reveal the gap: only asking again brings these two.
    await until(() => stream.events.length === 3);
    expect(shape(stream.events)).toEqual(shape(executor.broker.eventsAfter(runId, 0)));
  });

  it("forgets a run created here that ended in another process with no stream here, and keeps a streamed one's events", async () => {
    const { executor, follower, runId: streamed, stream } = await followedRun();
    executor.broker.end(streamed);
    await until(() => stream.isEnded());
    await executor.completion.announce(streamed);

    const unstreamed = randomUUID();
    follower.broker.follow(unstreamed, THREAD);
    executor.broker.open(unstreamed, THREAD, 1);
    executor.broker.publish(unstreamed, { event: "metadata", data: {} });
    executor.broker.end(unstreamed);
    await executor.completion.announce(unstreamed);
    // Announcements arrive in order: once the second run is forgotten, the first was heard.
    await until(() => follower.broker.stateOf(unstreamed) === undefined);
    expect(follower.broker.eventsAfter(streamed, 0)).toHaveLength(1);
  });
});

const THREAD = "00000000-0000-4000-8000-000000000001";

async function until(condition: () => boolean, ms = 8_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
