import { describe, expect, it } from "vitest";
import { StreamBroker } from "./broker.ts";
import { runStreamReader } from "./run-join.ts";
import type { RunEvent } from "./run-streams.ts";

const RUN = "run-1";
const THREAD = "thread-1";
const pending = { threadId: THREAD, finished: false };
const finished = { threadId: THREAD, finished: true };

async function drain(events: AsyncIterable<RunEvent>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const event of events) seen.push(event.data);
  return seen;
}

describe("run join (run-join.ts)", () => {
  it("follows a run queued but not held here, and reads it from its first event to its end", async () => {
    const broker = new StreamBroker();
    const reader = runStreamReader(broker);
    const events = reader.join(RUN, { replay: true, signal: new AbortController().signal, run: pending });
    expect(events.held).toBe(true);
    expect(events.open).toBe(true);
    expect(events.after).toBe(0);
    broker.open(RUN, THREAD, 1);
    broker.publish(RUN, { event: "values", data: 1, attempt: 1 });
    broker.publish(RUN, { event: "values", data: 2, attempt: 1 });
    broker.end(RUN);
    expect(events.open).toBe(false);
    expect(await drain(events)).toEqual([1, 2]);
  });

  it("starts a live join after the last event, and a resumed one after the id given", async () => {
    const broker = new StreamBroker();
    const reader = runStreamReader(broker);
    broker.open(RUN, THREAD, 1);
    for (let i = 1; i <= 3; i++) broker.publish(RUN, { event: "values", data: i });
    const signal = new AbortController().signal;
    const live = reader.join(RUN, { signal, run: pending });
    const resumed = reader.join(RUN, { afterId: 1, replay: true, signal, run: pending });
    expect(live.after).toBe(3);
    expect(resumed.after).toBe(1);
    broker.publish(RUN, { event: "values", data: 4 });
    broker.end(RUN);
    expect(await drain(live)).toEqual([4]);
    expect(await drain(resumed)).toEqual([2, 3, 4]);
  });

  it("says a finished run's stream is no longer held here, and yields nothing", async () => {
    const reader = runStreamReader(new StreamBroker());
    const events = reader.join(RUN, { afterId: 2, signal: new AbortController().signal, run: finished });
    expect(events.held).toBe(false);
    expect(events.open).toBe(false);
    expect(await drain(events)).toEqual([]);
  });

  it("ends a followed run whose record says it ended though its end was never heard here", async () => {
    const broker = new StreamBroker();
    broker.follow(RUN, THREAD);
    broker.inject(RUN, { id: 1, event: "values", data: "last" });
    const events = runStreamReader(broker).join(RUN, { replay: true, signal: new AbortController().signal, run: finished });
    expect(broker.stateOf(RUN)).toBe("ended");
    expect(await drain(events)).toEqual(["last"]);
  });

  it("tells when a run's stream ended, how, and after which event; nothing when the reader left first", async () => {
    const broker = new StreamBroker();
    const reader = runStreamReader(broker);
    broker.open(RUN, THREAD, 1);
    broker.publish(RUN, { event: "values", data: 1 });
    const ended = reader.ended(RUN, new AbortController().signal);
    const leave = new AbortController();
    const left = reader.ended(RUN, leave.signal);
    leave.abort();
    broker.publish(RUN, { event: "values", data: 2 });
    broker.end(RUN, { attempt: 1, handedOver: true });
    expect(await ended).toEqual({ lastId: 2, handedOver: true });
    expect(await left).toBeUndefined();
    // Already over, or never held: at once.
    expect(await reader.ended(RUN, new AbortController().signal)).toEqual({ lastId: 2, handedOver: true });
    expect(await reader.ended("no-such-run", new AbortController().signal)).toEqual({ lastId: 0, handedOver: false });
  });
});
