import { randomUUID } from "node:crypto";
import type { PipelineDeps } from "../context.ts";
import type { DeploymentRuntime } from "../runtime/runtime.ts";
import { claimJob, releaseAllJobs, releaseJob, renewJob, type JobClaim } from "./repository.ts";
import { runRevisionJob } from "./revision-job.ts";

/** Revisions worked on at once by one control plane (each build runs an install). */
const CONCURRENT_JOBS = 4;
const TICK_MS = 1_000;

/**
 * Claims revision jobs and runs them. Woken by the notification sent when a revision
 * starts (CREATING), and every second by a tick that starts waiting revisions that have
 * become due and takes over jobs whose lease ran out (their control plane died). While a
 * job runs its lease is renewed; a renewal that fails (the revision was interrupted or
 * deleted, or another process took it over) aborts the job.
 */
export class JobRunner {
  readonly worker = `pipeline-${randomUUID()}`;
  private readonly running = new Map<string, { claim: JobClaim; abort: AbortController; done: Promise<void> }>();
  private claiming = false;
  private again = false;
  private stopped = false;
  private tick: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly runtime: DeploymentRuntime,
  ) {}

  async start(): Promise<void> {
    if (!this.deps.db.shared) await releaseAllJobs(this.deps.db);
    this.unlisten = await this.deps.services.revisions.onReady(() => this.poke());
    this.deps.db.onReconnect(() => this.poke());
    this.tick = setInterval(() => void this.onTick(), TICK_MS);
    this.tick.unref();
    this.poke();
  }

  /** Stops claiming; jobs in progress are abandoned and their leases released, so the next start resumes them. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    await this.unlisten?.();
    const jobs = [...this.running.values()];
    for (const job of jobs) job.abort.abort(new Error("the control plane is stopping"));
    await Promise.allSettled(jobs.map((job) => job.done));
    for (const job of jobs) await releaseJob(this.deps.db, job.claim, this.worker).catch(() => undefined);
  }

  /** Revisions this process works on now. */
  jobs(): string[] {
    return [...this.running.keys()];
  }

  private async onTick(): Promise<void> {
    try {
      await this.deps.services.revisions.startDue(this.deps.now());
    } catch (error) {
      this.deps.log.warn({ err: error }, "starting due revisions failed");
    }
    this.poke();
  }

  private poke(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.claimLoop()
      .catch((error) => this.deps.log.warn({ err: error }, "claiming a revision job failed"))
      .finally(() => {
        this.claiming = false;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopped && this.running.size < CONCURRENT_JOBS) {
      const claim = await claimJob(this.deps.db, this.worker, this.deps.settings.jobLeaseMs);
      if (!claim) return;
      this.run(claim);
    }
  }

  private run(claim: JobClaim): void {
    const abort = new AbortController();
    const { jobLeaseMs } = this.deps.settings;
    const heartbeat = setInterval(
      () => {
        renewJob(this.deps.db, claim, this.worker, jobLeaseMs).then(
          (ours) => {
            if (!ours) abort.abort(new Error("the revision was interrupted, deleted or taken over"));
          },
          (error) => this.deps.log.warn({ err: error, revision_id: claim.revision_id }, "renewing a revision job's lease failed"),
        );
      },
      Math.max(200, jobLeaseMs / 3),
    );
    heartbeat.unref();
    const { deps, runtime, worker } = this;
    const done = runRevisionJob({ deps, runtime, claim, worker, signal: abort.signal })
      .catch((error) => this.deps.log.error({ err: error, revision_id: claim.revision_id }, "revision job crashed"))
      .finally(() => {
        clearInterval(heartbeat);
        this.running.delete(claim.revision_id);
        this.poke();
      });
    this.running.set(claim.revision_id, { claim, abort, done });
  }
}
