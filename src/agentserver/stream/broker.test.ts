import { describe, expect, it } from "vitest";
import { StreamBroker } from "./broker.ts";
import type { RunEvent } from "./run-streams.ts";

const RUN = "00000000-0000-4000-8000-00000000000a";
const THREAD = "00000000-0000-4000-8000-00000000000b";

describe("stream broker", () => {
  it("numbers events past the buffer's bound one by one (no repeated ids)", () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    const seen: number[] = [];
    broker.subscribe(RUN, { replay: true }, (event) => {
      if (event !== "end") seen.push(event.id);
    });
    const total = 50_010;
    for (let i = 0; i < total; i++) broker.publish(RUN, { event: "messages", data: { i } });
    expect(seen).toHaveLength(total);
    expect(seen.at(-1)).toBe(total);
    expect(new Set(seen).size).toBe(total);
    expect(broker.lastId(RUN)).toBe(total);
  });

  it("drops events of an earlier attempt once the run was claimed again here", () => {
    const broker = new StreamBroker();
    const got: RunEvent[] = [];
    broker.open(RUN, THREAD, 1);
    broker.subscribe(RUN, { replay: true }, (event) => {
      if (event !== "end") got.push(event);
    });
    broker.publish(RUN, { event: "metadata", data: { attempt: 1 }, attempt: 1 });
    broker.open(RUN, THREAD, 2);
    broker.publish(RUN, { event: "metadata", data: { attempt: 2 }, attempt: 2 });
    // The first attempt lost its lease but runs on, and ends in error.
    expect(broker.publish(RUN, { event: "error", data: { from: 1 }, attempt: 1 })).toBeUndefined();
    broker.end(RUN, { attempt: 1 });
    broker.publish(RUN, { event: "values", data: { done: 2 }, attempt: 2 });
    expect(got.map((event) => `${event.id}:${event.event}`)).toEqual(["1:metadata", "2:metadata", "3:values"]);
    expect(broker.stateOf(RUN)).toBe("executing");
  });

  it("lets a failed attempt's channel go back to following, readers kept, for the next attempt", () => {
    const broker = new StreamBroker();
    broker.open(RUN, THREAD, 1);
    const seen: Array<number | "end"> = [];
    broker.subscribe(RUN, { replay: true }, (event) => seen.push(event === "end" ? event : event.id));
    broker.publish(RUN, { event: "values", data: 1, attempt: 1 });
    broker.release(RUN, 2); // not the attempt executing here: nothing changes
    expect(broker.stateOf(RUN)).toBe("executing");
    broker.release(RUN, 1);
    expect(broker.stateOf(RUN)).toBe("following");
    expect(broker.publish(RUN, { event: "values", data: "late", attempt: 1 })).toBeUndefined();
    broker.open(RUN, THREAD, 2); // the retry, claimed here
    broker.publish(RUN, { event: "values", data: 2, attempt: 2 });
    broker.end(RUN, { attempt: 2 });
    expect(seen).toEqual([1, 2, "end"]);
    broker.release(RUN, 2); // over: stays over
    expect(broker.stateOf(RUN)).toBe("executed");
  });

  it("moves a channel through its states: followed, executed here, over, handed over", () => {
    const broker = new StreamBroker();
    broker.follow(RUN, THREAD);
    expect(broker.stateOf(RUN)).toBe("following");
    broker.end(RUN);
    expect(broker.stateOf(RUN)).toBe("ended");
    broker.follow(RUN, THREAD);
    expect(broker.stateOf(RUN)).toBe("following");
    broker.open(RUN, THREAD, 1);
    expect(broker.stateOf(RUN)).toBe("executing");
    broker.end(RUN, { attempt: 1, handedOver: true });
    expect(broker.stateOf(RUN)).toBe("handedOver");
    // Claimed again here: the next attempt's events continue the same stream.
    broker.open(RUN, THREAD, 2);
    expect(broker.stateOf(RUN)).toBe("executing");
    broker.end(RUN, { attempt: 2 });
    expect(broker.stateOf(RUN)).toBe("executed");
    expect(broker.stateOf("no-such-run")).toBeUndefined();
  });
});
