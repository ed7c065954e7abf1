import { randomUUID } from "node:crypto";
import type { Database } from "../../storage/database.ts";
import { schemaChannel } from "../runs/announcements.ts";
import { fireNextDueCron, type CronFiringDeps, type Firing } from "./firing.ts";
import { secondsUntilNextFiring } from "./repository.ts";

/** NOTIFY channel on which a created, changed or deleted cron wakes every scheduler. */
export const cronsChannel = (schema: string) => schemaChannel("slipway_crons", schema);

/** The longest delay setTimeout keeps (beyond it, Node fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

export interface CronSchedulerOptions {
  /** See CronFiringDeps.catchUpSeconds. */
  catchUpSeconds: number;
  /**
   * How soon to look again at a cron that is due but held by another process's firing:
   * it is normally advanced within milliseconds; if that process died, its transaction
   * is rolled back and the firing is ours to make.
   */
  busyRetryMs?: number;
  /** How soon to try again after the database failed. */
  errorRetryMs?: number;
  /** Told of each firing made here (tests, logs). */
  onFiring?: (firing: Firing) => void;
}

/**
 * Fires crons when they fall due, in every process of a deployment at once: each firing
 * is claimed in the database (firing.ts, repository.ts claimDueCron), so whichever
 * process gets there first fires it and the others find it done or held.
 *
 * It sleeps on one timer set to the earliest next firing (asked of the database, on its
 * clock), and wakes early on NOTIFY when any process creates, changes or deletes a cron.
 * It polls only while a due cron is held by another process, every `busyRetryMs`.
 */
export class CronScheduler {
  readonly id = `cron-scheduler-${randomUUID()}`;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private unlisten?: () => Promise<void>;

  constructor(
    private readonly deps: Omit<CronFiringDeps, "firedBy" | "catchUpSeconds"> & { db: Database },
    private readonly options: CronSchedulerOptions,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.deps.db.listen(cronsChannel(this.deps.db.schema), () => this.wake());
    // Changes announced while the notification connection was down are lost: look.
    this.deps.db.onReconnect(() => this.wake());
    this.wake();
  }

  /** Fires whatever is due, then sleeps until the next firing; calls during a pass rerun it. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.fireDue().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.unlisten?.().catch(() => undefined);
  }

  private async fireDue(): Promise<void> {
    const firingDeps: CronFiringDeps = { ...this.deps, firedBy: this.id, catchUpSeconds: this.options.catchUpSeconds };
    try {
      // One firing per transaction, until nothing due is left to us (a cron behind
      // schedule catches up here, one scheduled time after another).
      while (!this.stopped) {
        const firing = await fireNextDueCron(firingDeps);
        if (!firing) break;
        this.options.onFiring?.(firing);
      }
      if (this.stopped) return;
      const wait = await secondsUntilNextFiring(this.deps.db);
      if (wait === undefined) return this.sleep(undefined);
      // Due, yet nothing was ours to claim: another process holds it.
      this.sleep(wait > 0 ? Math.ceil(wait * 1000) + 5 : (this.options.busyRetryMs ?? 250));
    } catch (error) {
      this.deps.log.error({ err: error }, "firing crons failed; retrying");
      this.sleep(this.options.errorRetryMs ?? 1000);
    }
  }

  private sleep(ms: number | undefined): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (ms === undefined || this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.min(MAX_TIMER_MS, ms),
    );
    this.timer.unref();
  }
}
