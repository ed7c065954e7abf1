import type { RunResult } from "./completion.ts";
import type { RunRow } from "./repository.ts";

/**
 * What happens to a run, in the order it happens. The parts that react to a run (the
 * queue's workers, completion waiters, the stream broker, the relay, webhooks) subscribe
 * here instead of being called from wherever a run changes; see lifecycle-listeners.ts
 * for who listens to what.
 */
export interface RunLifecycleEvents {
  /**
   * Committed to the queue (a new run, by a request or a cron); `delaySeconds` is its
   * after_seconds. A run claimed as it was queued has status `running` (this process
   * executes it). `announced`: the transaction that queued it already told the other
   * processes, at its commit (migration 0022's statement, a cron's firing), so that a
   * run is announced exactly when it exists, even if this process stops right after.
   */
  queued: { run: RunRow; delaySeconds: number; announced?: boolean };
  /** A worker of this process took the run (attempt `run.attempt`). */
  claimed: { run: RunRow };
  /** Its graph starts executing. */
  started: { run: RunRow };
  /**
   * Over for good. `result` undefined: ended elsewhere, read the records. `cause`:
   * it ran to an end (`finished`), it was cancelled or interrupted before it could
   * (`stopped`), or it was deleted while executing (`removed`).
   */
  ended: { run: RunRow; result: RunResult | undefined; cause: "finished" | "stopped" | "removed" };
  /**
   * An attempt let go of the run without ending it. `requeued`: it is back in the queue
   * for any worker (a shutdown here, or the sweeper); else another worker took it after
   * our lease expired. `swept`: the sweeper of this process requeued it because the
   * attempt holding it (in any process) stopped renewing its lease; that attempt, if it
   * still runs here, tells its own hand-back when it ends. `failed`: the attempt here
   * threw before it ended the run, which stays leased until the sweeper requeues it.
   */
  handedBack: { run: RunRow; requeued: boolean; swept?: boolean; failed?: boolean };
}

export type LifecycleEvent = keyof RunLifecycleEvents;
type Listener<E extends LifecycleEvent> = (payload: RunLifecycleEvents[E]) => void | Promise<void>;

export class RunLifecycle {
  private readonly listeners: { [E in LifecycleEvent]: Array<Listener<E>> } = {
    queued: [],
    claimed: [],
    started: [],
    ended: [],
    handedBack: [],
  };

  constructor(private readonly log: { warn(obj: unknown, msg: string): void }) {}

  /** Listeners of an event run one after another, in the order they subscribed. */
  on<E extends LifecycleEvent>(event: E, listener: Listener<E>): void {
    this.listeners[event].push(listener);
  }

  /**
   * Tells every listener, awaiting each in turn. A listener that fails is logged and the
   * next still hears of it: a lost notification must not keep a local waiter waiting.
   */
  async emit<E extends LifecycleEvent>(event: E, payload: RunLifecycleEvents[E]): Promise<void> {
    for (const listener of this.listeners[event]) {
      try {
        await listener(payload);
      } catch (error) {
        this.log.warn({ err: error, event, run_id: payload.run.run_id }, "a listener of the run lifecycle failed");
      }
    }
  }
}
