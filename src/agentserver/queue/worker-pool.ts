import { randomUUID } from "node:crypto";
import type { Database } from "../../storage/database.ts";
import type { RunAssistant } from "../runs/executor.ts";
import { claimNextRun, renewLeases, requeueExpiredLeases, secondsUntilNextDueRun, type RunRow } from "../runs/repository.ts";
import { RUNS_CHANNEL, RUN_CANCEL_CHANNEL } from "./channels.ts";

export interface WorkerPoolOptions {
  /** Runs executed at once by this process. */
  workers: number;
  /** How long a claimed run stays ours without a heartbeat. */
  leaseSeconds: number;
  /**
   * The database belongs to this process alone (embedded PGlite): runs still marked
   * running at start-up were left by a crash and can be requeued at once instead of
   * after their lease expires.
   */
  exclusiveStorage: boolean;
}

/** Executes one claimed run to its end; provided by the run engine. */
export type RunProcessor = (run: RunRow, control: { signal: AbortSignal; workerId: string }) => Promise<void>;

/**
 * Claims runs and hands them to the processor, up to `workers` at a time.
 * Woken by NOTIFY on new runs (never sleep-polling), by a timer for runs scheduled
 * with after_seconds, and by a run finishing. Heartbeats renew the leases of the runs
 * it holds; a sweeper requeues runs whose lease expired (a crashed process's).
 */
export class WorkerPool {
  readonly workerId = `worker-${randomUUID()}`;
  private readonly active = new Map<string, AbortController>();
  private claiming = false;
  private claimAgain = false;
  private stopped = false;
  private dueTimer?: NodeJS.Timeout;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly process: RunProcessor,
    private readonly options: WorkerPoolOptions,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
  ) {}

  async start(): Promise<void> {
    await this.db.listen(RUNS_CHANNEL, () => this.poke());
    await this.db.listen(RUN_CANCEL_CHANNEL, (runId) => this.abortLocal(runId));
    if (this.options.exclusiveStorage) await requeueExpiredLeases(this.db, this.workerId);
    const lease = this.options.leaseSeconds * 1000;
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(200, lease / 3)));
    this.timers.push(setInterval(() => void this.sweep(), Math.max(200, lease / 2)));
    for (const timer of this.timers) timer.unref();
    this.poke();
  }

  /** Aborts a run executing in this process, if it is here. */
  abortLocal(runId: string): void {
    this.active.get(runId)?.abort();
  }

  isRunningHere(runId: string): boolean {
    return this.active.has(runId);
  }

  /** Tries to claim work; coalesces calls that arrive while a claim is under way. */
  poke(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    void this.claimLoop().finally(() => {
      this.claiming = false;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.poke();
      }
    });
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopped && this.active.size < this.options.workers) {
      let run: RunRow | undefined;
      try {
        run = await claimNextRun(this.db, this.workerId, this.options.leaseSeconds);
      } catch (error) {
        // Another claimer won the race for this thread (unique index fence): try again.
        if ((error as { code?: string }).code === "23505") continue;
        this.log.error({ err: error }, "claiming a run failed");
        return;
      }
      if (!run) {
        await this.scheduleDueWakeup();
        return;
      }
      this.launch(run);
    }
  }

  private launch(run: RunRow): void {
    const controller = new AbortController();
    this.active.set(run.run_id, controller);
    const task = this.process(run, { signal: controller.signal, workerId: this.workerId })
      .catch((error) => this.log.error({ err: error, run_id: run.run_id }, "run processing failed"))
      .finally(() => {
        this.active.delete(run.run_id);
        this.inFlight.delete(task);
        this.poke();
      });
    this.inFlight.add(task);
  }

  private async scheduleDueWakeup(): Promise<void> {
    const wait = await secondsUntilNextDueRun(this.db).catch(() => undefined);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    if (wait === undefined || this.stopped) return;
    this.dueTimer = setTimeout(() => this.poke(), Math.ceil(wait * 1000) + 5);
    this.dueTimer.unref();
  }

  private async heartbeat(): Promise<void> {
    if (this.active.size === 0) return;
    await renewLeases(this.db, this.workerId, this.options.leaseSeconds).catch((error) =>
      this.log.warn({ err: error }, "lease renewal failed"),
    );
  }

  private async sweep(): Promise<void> {
    try {
      const requeued = await requeueExpiredLeases(this.db);
      if (requeued.length) {
        this.log.warn({ runs: requeued }, "requeued runs whose worker stopped renewing its lease");
        this.poke();
      }
    } catch (error) {
      this.log.warn({ err: error }, "lease sweep failed");
    }
  }

  /** Stops claiming; waits up to `graceMs` for runs in progress, then aborts them. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    const all = Promise.allSettled([...this.inFlight]);
    const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([all, timeout]);
    for (const controller of this.active.values()) controller.abort();
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}

export type { RunAssistant };
