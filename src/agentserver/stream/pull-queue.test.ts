import { describe, expect, it } from "vitest";
import { PullQueue } from "./pull-queue.ts";

async function readAll<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of iterable) seen.push(item);
  return seen;
}

describe("PullQueue", () => {
  it("yields what was pushed, in order, then what comes later, and ends after close", async () => {
    const queue = new PullQueue<number>();
    queue.push(1);
    queue.push(2);
    const reading = readAll(queue);
    await new Promise((resolve) => setTimeout(resolve, 5));
    queue.push(3);
    queue.close();
    queue.push(4);
    expect(await reading).toEqual([1, 2, 3]);
  });

  it("keeps order across the compaction of what was read", async () => {
    const queue = new PullQueue<number>();
    const count = 5_000;
    for (let index = 0; index < count; index++) queue.push(index);
    queue.close();
    const seen = await readAll(queue);
    expect(seen.length).toBe(count);
    expect(seen.every((value, index) => value === index)).toBe(true);
  });

  it("stops at once when its signal aborts, and tells the producer once", async () => {
    const abort = new AbortController();
    let finished = 0;
    const queue = new PullQueue<number>(abort.signal, () => finished++);
    queue.push(1);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const item of queue) {
        seen.push(item);
        abort.abort();
      }
    })();
    await reading;
    queue.push(2);
    expect(seen).toEqual([1]);
    expect(finished).toBe(1);
  });

  it("tells the producer when aborted before anyone reads", () => {
    const abort = new AbortController();
    let finished = 0;
    new PullQueue<number>(abort.signal, () => finished++);
    abort.abort();
    expect(finished).toBe(1);
  });
});
