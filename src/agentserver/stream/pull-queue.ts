/**
 * Turns pushed items into an async iterable that a slow reader pulls at its own pace.
 * It holds references to the items, never copies: a client that reads slowly costs a
 * slot per unread event, while the events themselves stay shared with the broker.
 * Iteration ends after `close()` once the queue is empty, or at once when `signal` aborts.
 */
export class PullQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private wake?: () => void;

  private finished = false;

  constructor(private readonly signal?: AbortSignal, private readonly onFinish?: () => void) {
    if (signal?.aborted) this.finish();
    else signal?.addEventListener("abort", () => this.finish(), { once: true });
  }

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (!this.signal?.aborted) {
        if (this.head < this.items.length) {
          const item = this.items[this.head]!;
          // Drop what was read, in batches, so the array does not grow for the whole run.
          if (++this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.head = 0;
          }
          yield item;
          continue;
        }
        if (this.closed) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      this.finish();
    }
  }

  /** Over: what is unread is let go, and the producer is told once (it unsubscribes). */
  private finish(): void {
    this.close();
    this.items = [];
    if (this.finished) return;
    this.finished = true;
    this.onFinish?.();
  }
}
