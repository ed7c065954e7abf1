/** How much a reader may hold unread of what only it holds (decision 0027). */
export interface ReaderLimit {
  items: number;
  bytes: number;
}

/**
 * Thrown by the iteration, after every item held was yielded, when the reader fell
 * further behind than its limit: the producer stopped pushing, so what came next is
 * not in the queue. The consumer says so to its client; nothing is skipped silently.
 */
export class FellBehind extends Error {
  constructor(readonly limit: ReaderLimit | undefined) {
    super(
      limit
        ? `the reader fell more than ${limit.items} events or ${limit.bytes} bytes behind the stream`
        : "the events after the reader's start point are no longer held",
    );
    this.name = "FellBehind";
  }

  /** The data of the SSE `error` event that ends the reader's stream; `detail` says where it stopped. */
  payload(detail: string): { error: string; message: string } {
    return { error: "StreamFellBehind", message: `${this.message}; ${detail}` };
  }
}

/**
 * Turns pushed items into an async iterable that a slow reader pulls at its own pace.
 * It holds references to the items, never copies. An item pushed with a size is the
 * reader's own (nobody else keeps it) and counts against `limit`; one pushed without is
 * shared (the broker's buffer keeps it) and costs only a slot. A push past the limit
 * ends the queue: the producer is let go at once, the items held are still read, then
 * the iteration throws `FellBehind`. Iteration ends after `close()` once the queue is
 * empty, or at once when `signal` aborts.
 */
export class PullQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  /** Size of each item counted against the limit; -1 for a shared one. */
  private sizes: number[] = [];
  private head = 0;
  private closed = false;
  private behind = false;
  private overLimit = false;
  private wake?: () => void;
  private ownItems = 0;
  private ownBytes = 0;

  private released = false;

  constructor(
    private readonly signal?: AbortSignal,
    private readonly onFinish?: () => void,
    private readonly limit?: ReaderLimit,
  ) {
    if (signal?.aborted) this.finish();
    else signal?.addEventListener("abort", () => this.finish(), { once: true });
  }

  /** What the reader holds unread of its own (the items pushed with a size). */
  get unread(): { items: number; bytes: number } {
    return { items: this.ownItems, bytes: this.ownBytes };
  }

  /** Whether the queue ended because its reader fell behind. */
  get fellBehind(): boolean {
    return this.behind;
  }

  push(item: T, size?: number): void {
    if (this.closed) return;
    if (size !== undefined) {
      // A reader holding nothing of its own takes one event of any size: the limit is
      // on falling behind, not on how large one event may be.
      if (this.limit && this.ownItems > 0 && (this.ownItems + 1 > this.limit.items || this.ownBytes + size > this.limit.bytes)) {
        this.overLimit = true;
        this.fallBehind();
        return;
      }
      this.ownItems++;
      this.ownBytes += size;
    }
    this.items.push(item);
    this.sizes.push(size ?? -1);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /**
   * Nothing more comes: what is held is read, then the iteration throws `FellBehind`.
   * Called from outside when the reader starts before events no longer held.
   */
  fallBehind(): void {
    if (this.closed) return;
    this.behind = true;
    this.close();
    this.release();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      while (!this.signal?.aborted) {
        if (this.head < this.items.length) {
          const item = this.items[this.head]!;
          const size = this.sizes[this.head]!;
          if (size >= 0) {
            this.ownItems--;
            this.ownBytes -= size;
          }
          // Drop what was read, in batches, so the arrays do not grow for the whole run.
          if (++this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.sizes = this.sizes.slice(this.head);
            this.head = 0;
          }
          yield item;
          continue;
        }
        if (this.behind) throw new FellBehind(this.overLimit ? this.limit : undefined);
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
    this.sizes = [];
    this.ownItems = 0;
    this.ownBytes = 0;
    this.release();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.onFinish?.();
  }
}
