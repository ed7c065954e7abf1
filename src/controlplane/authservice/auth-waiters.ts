import type { Database } from "../../storage/database.ts";

const CHANNEL = "slipway_oauth_auth";
/** A lost notification (a reconnect) costs at most this much delay: waiters re-check this often. */
const RECHECK_MS = 1000;

/**
 * Wakes `wait/{auth_id}` requests when a callback finishes their flow, in this process
 * and, through NOTIFY, in others sharing the database. Waiters still re-read the database
 * every second, so a missed notification only delays them.
 */
export class AuthWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private subscription?: Promise<unknown>;

  constructor(private readonly db: Database) {}

  /** Resolves when `authId` is announced, after `ms`, or after the re-check interval, whichever is first. */
  async pause(authId: string, ms: number): Promise<void> {
    this.subscribe();
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.get(authId)?.delete(wake);
        if (this.waiting.get(authId)?.size === 0) this.waiting.delete(authId);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, Math.min(ms, RECHECK_MS)));
      const set = this.waiting.get(authId) ?? new Set();
      set.add(wake);
      this.waiting.set(authId, set);
    });
  }

  async announce(authId: string): Promise<void> {
    this.wake(authId);
    if (this.db.shared) await this.db.notify(CHANNEL, authId).catch(() => undefined);
  }

  private wake(authId: string): void {
    for (const wake of [...(this.waiting.get(authId) ?? [])]) wake();
  }

  private subscribe(): void {
    if (this.subscription || !this.db.shared) return;
    this.subscription = this.db
      .listen(CHANNEL, (authId) => this.wake(authId))
      .catch(() => {
        this.subscription = undefined;
      });
  }
}
