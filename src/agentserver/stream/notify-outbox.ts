import type { Database } from "../../storage/database.ts";

/**
 * Sends NOTIFY payloads on one channel, in order: payloads queued while a statement is
 * on its way go out together in the next one (up to 100). `sent` tells when what was
 * queued so far has gone out.
 */
export class NotifyOutbox {
  private outbox: string[] = [];
  /** Payloads queued and payloads gone out (or given up on) so far, for `sent`. */
  private queuedCount = 0;
  private doneCount = 0;
  private readonly sentWaiters: Array<{ upTo: number; resolve: () => void }> = [];
  private sending = false;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly channel: string,
    private readonly log?: { warn(obj: unknown, msg: string): void },
  ) {}

  send(payload: string): void {
    if (this.closed) return;
    this.queuedCount++;
    this.outbox.push(payload);
    if (this.sending) return;
    this.sending = true;
    this.flushing = this.flush();
  }

  /**
   * Resolves once every payload queued so far went out, or after `withinMs` (a stuck
   * statement must not hold up whoever waits).
   */
  sent(withinMs = 2_000): Promise<void> {
    if (this.doneCount >= this.queuedCount) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { upTo: this.queuedCount, resolve };
      this.sentWaiters.push(waiter);
      setTimeout(() => {
        const index = this.sentWaiters.indexOf(waiter);
        if (index >= 0) this.sentWaiters.splice(index, 1);
        resolve();
      }, withinMs).unref();
    });
  }

  /** Lets what is queued go out, then sends nothing more. */
  async close(): Promise<void> {
    while (this.sending) await this.flushing;
    this.closed = true;
    this.settleSent();
  }

  private settleSent(): void {
    const all = this.closed || !this.sending;
    for (let i = this.sentWaiters.length - 1; i >= 0; i--) {
      const waiter = this.sentWaiters[i]!;
      if (all || waiter.upTo <= this.doneCount) {
        this.sentWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  private async flush(): Promise<void> {
    try {
      while (this.outbox.length && !this.closed) {
        const batch = this.outbox.splice(0, 100);
        // Transport, not data: NOTIFY is how processes talk, so this statement stays beside its queue, not in a repository.
        const calls = batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(", ");
        const statement = () => this.db.query(`SELECT ${calls}`, [this.channel, ...batch]);
        // One more try for a dropped connection; receivers ask again for what is lost.
        await statement().catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await statement().catch((error) => this.log?.warn({ err: error, messages: batch.length }, "relay notifications lost"));
        });
        this.doneCount += batch.length;
        this.settleSent();
      }
    } catch {
      // Only a failing logger gets here; what was not sent is asked for again.
    } finally {
      this.sending = false;
      this.doneCount = this.queuedCount - this.outbox.length;
      this.settleSent();
    }
  }
}
