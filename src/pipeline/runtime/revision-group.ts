import type { CorsConfig } from "../../http/cors.ts";
import { StepFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";
import type { Replica } from "./runtime.ts";

/**
 * The agent processes of one revision (resource_spec.min_scale of them), as the router
 * sees them: it picks one that listens, round robin, and counts the requests in flight
 * so that a replaced revision is stopped only once they are done.
 */
export class RevisionGroup {
  inFlight = 0;
  /** When a request through the router last began or ended (its start, before any): how long it has been idle. */
  lastActiveAt = Date.now();
  private next = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly deploymentId: string,
    readonly revisionId: string,
    readonly processes: readonly Replica[],
    /** The key the router presents to these processes (they accept no other). */
    readonly internalKey: string,
    readonly log: LogWriter,
  ) {}

  /** http.cors of the revision's langgraph.json, once a process has reported it. */
  get cors(): CorsConfig | undefined {
    return this.processes.find((process_) => process_.cors)?.cors;
  }

  /** A listening process, or undefined while none is (starting, restarting). */
  pick(): Replica | undefined {
    for (let i = 0; i < this.processes.length; i++) {
      const candidate = this.processes[(this.next + i) % this.processes.length];
      if (candidate.endpoint) {
        this.next = (this.next + i + 1) % this.processes.length;
        return candidate;
      }
    }
    return undefined;
  }

  begin(): void {
    this.inFlight++;
    this.lastActiveAt = Date.now();
  }

  end(): void {
    this.inFlight--;
    this.lastActiveAt = Date.now();
    if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves when no request is in flight, or after `timeoutMs`; true if idle. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /**
   * Waits until every process answers /ok. After `timeoutMs`, a DEPLOY_FAILED naming the
   * timeout and what the processes printed last. Polled every 100 ms for the first 10 s,
   * then every second: an agent process answers about a second after it is spawned, and a
   * poll of a second alone added up to a second to every deploy and every wake.
   */
  async ready(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    for (;;) {
      const pause = Date.now() - started < 10_000 ? 100 : 1_000;
      if (signal.aborted) throw signal.reason;
      const answers = await Promise.all(this.processes.map((p) => p.healthy()));
      if (answers.every(Boolean)) return;
      if (Date.now() >= deadline) {
        const tail = this.log.tail(30);
        throw new StepFailure(
          "DEPLOY_FAILED",
          `Starting the agent server failed: ${answers.filter((ok) => !ok).length} of ${answers.length} process(es) did not answer /ok ` +
            `within ${Math.round(timeoutMs / 1000)} s (the readiness timeout).` +
            (tail.length ? `\nLast lines of its output:\n${tail.map((l) => `  ${l}`).join("\n")}` : " It printed nothing."),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(50, deadline - Date.now()))));
    }
  }

  drain(): void {
    for (const process of this.processes) process.drain();
  }

  async stop(graceMs: number): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop(graceMs)));
  }
}
