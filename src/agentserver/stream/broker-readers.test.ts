import { describe, expect, it } from "vitest";
import { READER_LIMIT, StreamBroker } from "./broker.ts";
import type { RunEvent } from "./run-streams.ts";
import { FellBehind } from "./pull-queue.ts";

const RUN = "00000000-0000-4000-8000-00000000000c";
const THREAD = "00000000-0000-4000-8000-00000000000d";
const PAYLOAD = "x".repeat(1_000);

/** Reads everything a join holds; returns the ids read and how the iteration ended. */
async function drain(events: AsyncIterable<RunEvent | { runId: string; event: RunEvent }>): Promise<{ ids: number[]; ending: unknown }> {
  const ids: number[] = [];
  try {
    for await (const item of events) ids.push("runId" in item ? item.event.id : item.id);
    return { ids, ending: "end" };
  } catch (error) {
    return { ids, ending: error };
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe("stream broker readers (decision 0027)", () => {
  it("a stalled join past the broker's buffer holds at most its limit, then reads what it held and is told it fell behind", async () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    const join = broker.join(RUN, { replay: true });
    let most = 0;
    for (let i = 0; i < 120_000; i++) {
      broker.publish(RUN, { event: "custom", data: { i, payload: PAYLOAD } });
      most = Math.max(most, join.unread.items);
    }
    broker.end(RUN);
    // The first 50,000 are the broker's (shared); of the rest the reader holds its limit at most.
    expect(most).toBeLessThanOrEqual(READER_LIMIT.items);
    expect(join.unread.bytes).toBeLessThanOrEqual(READER_LIMIT.bytes);
    expect(join.fellBehind).toBe(true);
    const { ids, ending } = await drain(join);
    expect(ending).toBeInstanceOf(FellBehind);
    expect(ids).toEqual(range(1, ids.length));
    expect(ids.length).toBeGreaterThan(50_000);
    expect(ids.length).toBeLessThanOrEqual(50_000 + READER_LIMIT.items);
  });

  it("a stalled join of a run the broker's buffer holds never falls behind", async () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    const join = broker.join(RUN, { replay: true });
    for (let i = 0; i < 50_000; i++) broker.publish(RUN, { event: "custom", data: { i, payload: PAYLOAD } });
    broker.end(RUN);
    expect(join.unread).toEqual({ items: 0, bytes: 0 });
    const { ids, ending } = await drain(join);
    expect(ending).toBe("end");
    expect(ids).toEqual(range(1, 50_000));
  });

  it("a join starting before events the broker no longer holds gets what it holds, then is told", async () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    for (let i = 0; i < 60_000; i++) broker.publish(RUN, { event: "custom", data: { i } });
    const fromHeld = await drain(broker.join(RUN, { afterId: 49_990, replay: true }));
    expect(fromHeld.ids).toEqual(range(49_991, 50_000));
    expect(fromHeld.ending).toBeInstanceOf(FellBehind);
    const pastHeld = await drain(broker.join(RUN, { afterId: 55_000, replay: true }));
    expect(pastHeld.ids).toEqual([]);
    expect(pastHeld.ending).toBeInstanceOf(FellBehind);
    // Not over its limit: told that the events after its start point are not held.
    expect((pastHeld.ending as FellBehind).limit).toBeUndefined();
    // From the last event on there is nothing missing: live events come as usual.
    const live = broker.join(RUN, { afterId: 60_000, replay: true });
    broker.publish(RUN, { event: "custom", data: { i: 60_000 } });
    broker.end(RUN);
    expect(await drain(live)).toEqual({ ids: [60_001], ending: "end" });
  });

  it("a late join replaying more of the broker's buffer than its own limit gets it all: those events are shared", async () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    for (let i = 0; i < READER_LIMIT.items + 5_000; i++) broker.publish(RUN, { event: "custom", data: { i } });
    const fromStart = broker.join(RUN, { replay: true });
    const fromEarly = broker.join(RUN, { afterId: 10, replay: true });
    expect(fromStart.unread).toEqual({ items: 0, bytes: 0 });
    broker.publish(RUN, { event: "custom", data: { i: -1 } });
    broker.end(RUN);
    expect(await drain(fromStart)).toEqual({ ids: range(1, READER_LIMIT.items + 5_001), ending: "end" });
    expect(await drain(fromEarly)).toEqual({ ids: range(11, READER_LIMIT.items + 5_001), ending: "end" });
  });

  it("a join of a followed run behind the reader's start point gets the events after it once, not those it had", async () => {
    // A client read up to event 3 from the process executing the run and joins this one,
    // whose relay brings the run's events from the first.
    const broker = new StreamBroker();
    broker.follow(RUN, THREAD);
    const join = broker.join(RUN, { afterId: 3, replay: true });
    for (let id = 1; id <= 5; id++) broker.inject(RUN, { id, event: "custom", data: { id } });
    broker.end(RUN);
    expect(await drain(join)).toEqual({ ids: [4, 5], ending: "end" });
  });

  it("a join of a followed run whose relay went on over a gap is told, not handed the events after it", async () => {
    const broker = new StreamBroker();
    broker.follow(RUN, THREAD);
    const join = broker.join(RUN, { replay: true });
    for (const id of [1, 2, 5, 6]) broker.inject(RUN, { id, event: "custom", data: { id } });
    broker.end(RUN);
    const { ids, ending } = await drain(join);
    expect(ids).toEqual([1, 2]);
    expect(ending).toBeInstanceOf(FellBehind);
    // A join starting after the gap misses nothing.
    expect(await drain(broker.join(RUN, { afterId: 4, replay: true }))).toEqual({ ids: [5, 6], ending: "end" });
  });

  it("a stalled thread stream holds at most its limit, whatever the runs' buffers keep", async () => {
    const broker = new StreamBroker();
    const abort = new AbortController();
    const stream = broker.joinThread(THREAD, abort.signal);
    let most = 0;
    for (let run = 0; run < 4; run++) {
      const runId = `00000000-0000-4000-8000-00000000010${run}`;
      broker.open(runId, THREAD, 1);
      for (let i = 0; i < 5_000; i++) {
        broker.publish(runId, { event: "custom", data: { i, payload: PAYLOAD } });
        most = Math.max(most, stream.unread.items);
      }
      broker.end(runId);
    }
    expect(most).toBeLessThanOrEqual(READER_LIMIT.items);
    expect(stream.fellBehind).toBe(true);
    const { ids, ending } = await drain(stream);
    expect(ending).toBeInstanceOf(FellBehind);
    expect(ids.length).toBeLessThanOrEqual(READER_LIMIT.items);
    abort.abort();
  });
});
