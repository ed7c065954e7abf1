import type { Database } from "../../storage/database.ts";
import { runDoneChannel } from "./announcements.ts";
import { stillActiveRunIds } from "./repository.ts";
import type { RunStatus } from "./schemas.ts";

export interface RunResult {
  run_id: string;
  status: RunStatus;
  /** Final values of the run's thread (or of the run, for a temporary thread). */
  values?: unknown;
  error?: { error: string; message: string };
}

/**
 * Lets HTTP handlers wait for a run to end. The worker that finishes a run resolves
 * local waiters directly (with the final values in hand) and NOTIFYs, so waiters
 * in other processes on the same PostgreSQL wake up too.
 */
export class RunCompletion {
  private readonly waiters = new Map<string, Set<(result: RunResult | undefined) => void>>();
  /**
   * Runs announced as ended, newest last. A waiter registered just after such an
   * announcement (its run ended in another process within the moment between being read
   * as active and the waiter's registration) is answered at once.
   */
  private readonly recentlyEnded = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly log?: { warn(obj: unknown, msg: string): void },
    private readonly rememberEnded = 10_000,
  ) {}

  private readonly endedListeners = new Set<(runId: string) => void>();

  async start(): Promise<void> {
    await this.db.listen(runDoneChannel(this.db.schema), (runId) => {
      this.remember(runId);
      this.settle(runId, undefined);
      for (const listener of this.endedListeners) listener(runId);
    });
    this.db.onReconnect(() => {
      this.recheck().catch((error) => this.log?.warn({ err: error }, "re-reading awaited runs after a reconnect failed"));
    });
  }

  /**
   * After the notification connection came back: the runs waited on that ended (or
   * were removed) meanwhile are settled, since their "done" notification may be lost.
   */
  async recheck(): Promise<void> {
    const ids = [...this.waiters.keys()];
    if (!ids.length) return;
    const stillRunning = new Set(await stillActiveRunIds(this.db, ids));
    for (const runId of ids) if (!stillRunning.has(runId)) this.settle(runId, undefined);
  }

  private remember(runId: string): void {
    this.recentlyEnded.add(runId);
    if (this.recentlyEnded.size > this.rememberEnded) {
      const oldest = this.recentlyEnded.values().next().value;
      if (oldest !== undefined) this.recentlyEnded.delete(oldest);
    }
  }

  /** Called with every run announced as ended (in any process of the database). */
  onEnded(listener: (runId: string) => void): void {
    this.endedListeners.add(listener);
  }

  /** Resolves when the run ends; `undefined` means "ended elsewhere: read the records". */
  wait(runId: string, signal?: AbortSignal): Promise<RunResult | undefined> {
    if (this.recentlyEnded.has(runId)) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let set = this.waiters.get(runId);
      if (!set) {
        set = new Set();
        this.waiters.set(runId, set);
      }
      const done = (result: RunResult | undefined) => {
        set!.delete(done);
        if (set!.size === 0 && this.waiters.get(runId) === set) this.waiters.delete(runId);
        resolve(result);
      };
      set.add(done);
      signal?.addEventListener("abort", () => done(undefined), { once: true });
    });
  }

  /** Called by the worker (with the result) and by the notification (without). */
  settle(runId: string, result: RunResult | undefined): void {
    const set = this.waiters.get(runId);
    if (!set) return;
    this.waiters.delete(runId);
    for (const resolve of set) resolve(result);
  }

  async announce(runId: string): Promise<void> {
    await this.db.notify(runDoneChannel(this.db.schema), runId);
  }
}
