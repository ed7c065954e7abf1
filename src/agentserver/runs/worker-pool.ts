import { randomUUID } from "node:crypto";
import { getHeapStatistics } from "node:v8";
import type { Database } from "../../storage/database.ts";
import type { AttemptControl, NextRun } from "./attempt.ts";
import type { RunAssistant } from "./executor.ts";
import { claimNextRun, handBackRun, renewLeases, requeueExpiredLeases, secondsUntilNextDueRun } from "./queue-repository.ts";
import type { RunRow } from "./repository.ts";
import { readQueueAnnouncement, runCancelChannel, runsChannel } from "./announcements.ts";
import type { RunLifecycle } from "./lifecycle.ts";

/** The longest delay setTimeout keeps (beyond it, Node fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

export interface WorkerPoolOptions {
  /** Runs executed at once by this process. */
  workers: number;
  /**
   * Claims pause while the JavaScript heap uses more than this fraction of its limit
   * (and at least one run executes here): the memory bound of many waiting runs.
   */
  heapFraction?: number;
  /** How long a claimed run stays ours without a heartbeat. */
  leaseSeconds: number;
  /**
   * The database belongs to this process alone (embedded PGlite): runs still marked
   * running at start-up were left by a crash and can be requeued at once instead of
   * after their lease expires.
   */
  exclusiveStorage: boolean;
}

/**
 * Executes one claimed run to its end; provided by runs/attempt.ts. It may come back with
 * the thread's next run, claimed for this pool with the end (`control.claimNext`).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a runner with no next run may be an async function that returns nothing.
export type AttemptRunner = (run: RunRow, control: AttemptControl) => Promise<NextRun | undefined | void>;

/**
 * Claims runs and runs an attempt of each (runs/attempt.ts), up to `workers` at a time.
 * Woken by NOTIFY on new runs (never sleep-polling), by a timer for runs scheduled
 * with after_seconds, and by a run finishing. Heartbeats renew the leases of the runs
 * it holds; a sweeper requeues runs whose lease expired (a crashed process's). Runs it
 * gives back to the queue are told through the lifecycle (`handedBack`).
 */
export class WorkerPool {
  readonly workerId = `worker-${randomUUID()}`;
  private readonly active = new Map<string, AbortController>();
  /** Threads of the runs executing here. */
  private readonly activeThreads = new Map<string, number>();
  /** Threads with a run queued behind the one executing here: claim again when it ends. */
  private readonly waitingThreads = new Set<string>();
  /**
   * Claims worth attempting: one per run announced as due. Counting them, instead of
   * claiming until a claim comes back empty, saves an empty claim per run.
   */
  private credits = 0;
  /** Claim until nothing is claimable (start-up, due timers, requeued leases). */
  private drain = false;
  /** A claim came back empty while runs executed here: a run may wait behind one of them. */
  private maybeBlocked = false;
  /**
   * Bumped by every event that may make a run claimable (announcement, timer, a run
   * ending). A claim sees only what was committed when it began: if this moved while
   * it ran, an empty answer proves nothing and we claim again.
   */
  private signals = 0;
  private claiming = false;
  private claimAgain = false;
  /** Workers promised to runs being created here (reserve). */
  private reserved = 0;
  /** Runs claimed for this pool that have not started yet (hold): already cancellable and leased. */
  private readonly held = new Map<string, AbortController>();
  private stopped = false;
  /** Claims no new runs; those in progress go on (see cordon). */
  private cordoned = false;
  private dueTimer?: NodeJS.Timeout;
  private dueAt = 0;
  /** Asks for the next due time again after the question failed. */
  private retryDueCheck?: NodeJS.Timeout;
  /** Set when the next empty claim should look up the next delayed run's due time. */
  private dueCheck = false;
  private heartbeatTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly lifecycle: Pick<RunLifecycle, "emit">,
    private readonly runAttempt: AttemptRunner,
    private readonly options: WorkerPoolOptions,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
  ) {}

  async start(): Promise<void> {
    await this.db.listen(runsChannel(this.db.schema), (payload) => this.onRunQueued(payload));
    await this.db.listen(runCancelChannel(this.db.schema), (runId) => this.abortLocal(runId));
    // Announcements sent while the notification connection was down are lost: look.
    this.db.onReconnect(() => this.drainQueue());
    // Runs a crash left running in a database of our own: no other process to tell, and
    // the drain below claims them.
    if (this.options.exclusiveStorage) await requeueExpiredLeases(this.db, this.workerId);
    const lease = this.options.leaseSeconds * 1000;
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), Math.max(200, lease / 3)).unref();
    this.sweepTimer = setInterval(() => void this.sweep(), Math.max(200, lease / 2)).unref();
    // Delayed runs queued before we started: ask the database once; later ones are
    // announced with their delay (see onRunQueued).
    this.dueCheck = true;
    this.drainQueue();
  }

  /**
   * A run was queued, or a thread's queue changed (by any process on this database);
   * the payload is made by `queueAnnouncement`. A delayed run sets a timer; a run behind
   * one executing here is claimed when that one ends; any other due run is claimed now.
   */
  private onRunQueued(payload: string): void {
    const { delaySeconds: delay, threadId, claimed } = readQueueAnnouncement(payload);
    if (claimed) return;
    this.signals++;
    if (delay > 0) this.wakeAt(Date.now() + delay * 1000);
    if (threadId && this.activeThreads.has(threadId)) {
      this.waitingThreads.add(threadId);
      return;
    }
    if (delay > 0) return;
    this.credits++;
    this.poke();
  }

  /** Claims until the queue has nothing claimable. */
  private drainQueue(): void {
    this.signals++;
    this.drain = true;
    this.poke();
  }

  /** Keeps one timer, for the earliest known due time; firing it also re-asks the database. */
  private wakeAt(at: number): void {
    if (this.stopped || (this.dueTimer && this.dueAt <= at)) return;
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueAt = at;
    this.dueTimer = setTimeout(
      () => {
        this.dueTimer = undefined;
        // Our clock and the database's may differ a little, and further delayed runs
        // may wait behind this one: after claiming, look up the next due time.
        this.dueCheck = true;
        this.drainQueue();
        // Node fires a timer of more than 2^31 - 1 ms (24.8 days) after 1 ms: a run delayed
        // longer is looked at again after the longest wait instead of in a busy loop.
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now()) + 5),
    );
    this.dueTimer.unref();
  }

  /**
   * A worker for a run about to be created here, if one is free: the creation may claim
   * the run in the statement that queues it (migration 0022). It becomes `hold(run, true)`
   * (then `adopt(run)`) when the run came back claimed, else it is given back with `unreserve()`.
   */
  reserve(): { workerId: string; leaseSeconds: number } | undefined {
    if (this.stopped || this.cordoned || !this.hasRoom()) return undefined;
    this.reserved++;
    return { workerId: this.workerId, leaseSeconds: this.options.leaseSeconds };
  }

  /** Gives back a reservation whose run was not claimed (it is queued and announced as usual). */
  unreserve(): void {
    this.reserved--;
  }

  /**
   * Counts a run claimed for this pool as its own before it starts (a reservation that was
   * used, or the next run a run's end claimed): a cancel reaches it and its lease is renewed.
   */
  hold(run: RunRow, reservation = false): void {
    if (reservation) this.reserved--;
    if (this.held.has(run.run_id)) return;
    const controller = new AbortController();
    this.held.set(run.run_id, controller);
    this.active.set(run.run_id, controller);
    this.activeThreads.set(run.thread_id, (this.activeThreads.get(run.thread_id) ?? 0) + 1);
  }

  /**
   * Executes a run that its creation claimed for this pool (status running, leased to us;
   * see hold); `start`: the thread's newest checkpoint, when the creation knew it.
   */
  adopt(run: RunRow, start?: NextRun["start"]): void {
    this.launch(run, false, start);
  }

  /** Workers as `/metrics` counts them: the most runs executed here at once, and how many are taken. */
  workerStats(): { max: number; active: number; available: number } {
    const active = Math.min(this.options.workers, this.active.size + this.reserved);
    return { max: this.options.workers, active, available: this.options.workers - active };
  }

  /** Aborts a run executing in this process, if it is here. */
  abortLocal(runId: string): void {
    this.active.get(runId)?.abort();
  }

  /** Tries to claim work; coalesces calls that arrive while a claim is under way. */
  poke(): void {
    if (this.stopped || this.cordoned) return;
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
    while (!this.stopped && this.hasRoom() && (this.drain || this.credits > 0)) {
      if (!this.drain) this.credits--;
      const signalsBefore = this.signals;
      const activeBefore = this.active.size;
      let claimed: { run: RunRow; moreOnThread: boolean } | undefined;
      try {
        claimed = await claimNextRun(this.db, this.workerId, this.options.leaseSeconds);
      } catch (error) {
        // Another claimer won the race for this thread (unique index fence): try again.
        if ((error as { code?: string }).code === "23505") {
          this.credits++;
          continue;
        }
        // The database is unreachable or failing: come back and claim everything then.
        this.log.error({ err: error }, "claiming a run failed; retrying in 1 s");
        setTimeout(() => this.drainQueue(), 1000).unref();
        return;
      }
      if (!claimed) {
        if (this.signals !== signalsBefore) {
          // Something arrived while we claimed (a run, a timer, a run's end): look again.
          this.drain = true;
          continue;
        }
        // Nothing claimable: taken by another process, or queued behind a running run.
        // (A run being created here may hold its thread claimed before it is launched.)
        if (this.active.size > 0 || activeBefore > 0 || this.reserved > 0) this.maybeBlocked = true;
        this.drain = false;
        this.credits = 0;
        if (this.dueCheck) {
          this.dueCheck = false;
          await this.scheduleDueWakeup();
        }
        return;
      }
      this.launch(claimed.run, claimed.moreOnThread);
    }
  }

  /**
   * Room for one more run: under `workers`, and the heap under its bound. A run ending
   * pokes the pool, so claiming resumes once memory is freed; with nothing executing
   * here a run is always claimed, so a full heap never stalls the queue.
   */
  private hasRoom(): boolean {
    const busy = this.active.size + this.reserved;
    if (busy >= this.options.workers) return false;
    return busy === 0 || this.heapUnderBound();
  }

  private heapUnderBound(): boolean {
    const fraction = this.options.heapFraction;
    if (fraction === undefined) return true;
    const heap = getHeapStatistics();
    return heap.used_heap_size < heap.heap_size_limit * fraction;
  }

  /** A run's slot is free again (its entry stays if a later attempt of it took the slot). */
  private vacate(run: RunRow, controller: AbortController): void {
    if (this.active.get(run.run_id) === controller) this.active.delete(run.run_id);
    const left = (this.activeThreads.get(run.thread_id) ?? 1) - 1;
    if (left > 0) this.activeThreads.set(run.thread_id, left);
    else this.activeThreads.delete(run.thread_id);
  }

  private launch(run: RunRow, moreOnThread: boolean, start?: NextRun["start"]): void {
    this.hold(run);
    const controller = this.held.get(run.run_id)!;
    this.held.delete(run.run_id);
    const threadId = run.thread_id;
    if (this.stopped) {
      // Claimed as the pool stopped (a creation or a run's end under way): back to the queue.
      void this.handBack(run, controller);
      return;
    }
    if (moreOnThread) this.waitingThreads.add(threadId);
    let next: NextRun | undefined;
    const task = this.runAttempt(run, {
      signal: controller.signal,
      workerId: this.workerId,
      start,
      claimNext: () => this.mayTakeNext(),
      claimedNext: (claimed) => {
        this.hold(claimed);
        // Started even if the attempt fails after this: held, it would keep its lease for ever.
        next = { run: claimed, moreOnThread: false };
      },
    })
      .then((claimed) => void (next = claimed ?? next))
      .catch((error) => {
        this.log.error({ err: error, run_id: run.run_id }, "run processing failed");
        // It may have thrown after recording the run's end: then its channel is over and this changes nothing.
        return this.lifecycle.emit("handedBack", { run, requeued: false, failed: true });
      })
      .finally(() => {
        // An earlier attempt that lost its lease may end after the run was claimed again
        // here: the later attempt's entry (its lease, its cancel) stays.
        this.vacate(run, controller);
        this.inFlight.delete(task);
        this.signals++;
        if (next) {
          // Claimed with this run's end: it takes the slot this one leaves.
          this.launch(next.run, next.moreOnThread, next.start);
        } else if (this.waitingThreads.delete(threadId) || this.maybeBlocked) {
          // The next run of this thread (or one an empty claim could not take) may go now.
          this.maybeBlocked = false;
          this.credits++;
        }
        if (this.credits > 0 || this.drain) this.poke();
      });
    this.inFlight.add(task);
  }

  /** Returns a run this stopped pool holds but never started to the queue, for another process. */
  private async handBack(run: RunRow, controller: AbortController): Promise<void> {
    try {
      const requeued = await handBackRun(this.db, run.run_id, { workerId: this.workerId, attempt: run.attempt });
      await this.lifecycle.emit("handedBack", { run, requeued });
    } catch (error) {
      this.log.warn({ err: error, run_id: run.run_id }, "handing back a run claimed while stopping failed; its lease will expire");
    } finally {
      this.vacate(run, controller);
    }
  }

  /**
   * Whether a run ending here may claim its thread's next run with its end (it keeps the
   * slot, so only stopping, a cordon or a full heap say no).
   */
  private mayTakeNext(): { leaseSeconds: number } | undefined {
    if (this.stopped || this.cordoned) return undefined;
    if (this.active.size > 1 && !this.heapUnderBound()) return undefined;
    return { leaseSeconds: this.options.leaseSeconds };
  }

  /** Asks the database when the next delayed run is due (one query, not one per claim). */
  private async scheduleDueWakeup(): Promise<void> {
    let wait: number | undefined;
    try {
      wait = await secondsUntilNextDueRun(this.db);
    } catch (error) {
      // Without it a delayed run would wait for some other wake-up: ask again shortly.
      this.log.warn({ err: error }, "looking up when the next delayed run is due failed; asking again in 1 s");
      this.retryDueCheck ??= setTimeout(() => {
        this.retryDueCheck = undefined;
        this.dueCheck = true;
        this.drainQueue();
      }, 1000).unref();
      return;
    }
    if (wait !== undefined) this.wakeAt(Date.now() + Math.ceil(wait * 1000));
  }

  private async heartbeat(): Promise<void> {
    if (this.active.size === 0) return;
    await renewLeases(this.db, this.workerId, [...this.active.keys()], this.options.leaseSeconds).catch((error) =>
      this.log.warn({ err: error }, "lease renewal failed"),
    );
  }

  private async sweep(): Promise<void> {
    try {
      const requeued = await requeueExpiredLeases(this.db);
      if (requeued.length) {
        this.log.warn({ runs: requeued.map((run) => run.run_id) }, "requeued runs whose worker stopped renewing its lease");
        this.drainQueue();
        // Announced like new runs (lifecycle-listeners.ts): workers of every process may
        // take them, and streams following their threads (thread-follow.ts) follow them again.
        for (const run of requeued) await this.lifecycle.emit("handedBack", { run, requeued: true, swept: true });
      }
    } catch (error) {
      this.log.warn({ err: error }, "lease sweep failed");
    }
  }

  /**
   * Claims no new runs from now on; runs in progress go on and their leases stay renewed.
   * A revision being replaced does this while it drains, so that runs queued meanwhile
   * go to the new revision's processes.
   */
  cordon(): void {
    this.cordoned = true;
  }

  /** Stops claiming; waits up to `graceMs` for runs in progress, then aborts them. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    // The heartbeat keeps the leases of runs still finishing alive during the grace
    // period; the sweeper and the due timer stop now.
    clearInterval(this.sweepTimer);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    if (this.retryDueCheck) clearTimeout(this.retryDueCheck);
    try {
      const all = Promise.allSettled([...this.inFlight]);
      const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([all, timeout]);
      for (const controller of this.active.values()) controller.abort();
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, 1000).unref())]);
    } finally {
      clearInterval(this.heartbeatTimer);
    }
  }
}

export type { RunAssistant };
