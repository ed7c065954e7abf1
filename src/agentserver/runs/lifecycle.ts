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
   * Committed to the queue (a new run); `delaySeconds` is its after_seconds. A run claimed
   * as it was queued has status `running` (this process executes it); `announced` says
   * the queueing statement already told the other processes (migration 0022).
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
   * This process let go of the attempt without ending the run: back in the queue
   * (`requeued`, a shutdown) or taken by another worker after our lease expired.
   */
  handedBack: { run: RunRow; requeued: boolean };
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
