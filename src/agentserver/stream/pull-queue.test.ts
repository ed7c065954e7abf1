import { describe, expect, it } from "vitest";
import { FellBehind, PullQueue } from "./pull-queue.ts";

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

  it("holds no more of its own than its limit: a push past it ends the queue after what is held", async () => {
    let released = 0;
    const queue = new PullQueue<number>(undefined, () => released++, { items: 3, bytes: 1_000 });
    for (let index = 1; index <= 100_000; index++) queue.push(index, 10);
    expect(queue.unread).toEqual({ items: 3, bytes: 30 });
    expect(queue.fellBehind).toBe(true);
    // The producer is let go at once, not when the reader gets there.
    expect(released).toBe(1);
    const seen: number[] = [];
    const failure = await (async () => {
      for await (const item of queue) seen.push(item);
    })().catch((error: unknown) => error);
    expect(seen).toEqual([1, 2, 3]);
    expect(failure).toBeInstanceOf(FellBehind);
    expect((failure as FellBehind).limit).toEqual({ items: 3, bytes: 1_000 });
    expect(released).toBe(1);
  });

  it("counts bytes too, but always takes one item when it holds none of its own", () => {
    const queue = new PullQueue<string>(undefined, undefined, { items: 100, bytes: 50 });
    queue.push("huge", 1_000);
    expect(queue.fellBehind).toBe(false);
    queue.push("small", 1);
    expect(queue.fellBehind).toBe(true);
    expect(queue.unread).toEqual({ items: 1, bytes: 1_000 });
  });

  it("does not count shared items, and frees what was read", async () => {
    const queue = new PullQueue<number>(undefined, undefined, { items: 2, bytes: 100 });
    for (let index = 0; index < 5_000; index++) queue.push(index);
    queue.push(-1, 40);
    queue.push(-2, 40);
    expect(queue.fellBehind).toBe(false);
    const reader = queue[Symbol.asyncIterator]();
    for (let index = 0; index < 5_001; index++) await reader.next();
    expect(queue.unread).toEqual({ items: 1, bytes: 40 });
    queue.push(-3, 40);
    expect(queue.fellBehind).toBe(false);
    queue.close();
    expect((await reader.next()).value).toBe(-2);
    expect((await reader.next()).value).toBe(-3);
    expect((await reader.next()).done).toBe(true);
  });
});
