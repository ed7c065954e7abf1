import type { PipelineDeps } from "../context.ts";
import { serveAgain, type UnservedRevisions } from "../restore.ts";
import { activeRevisionOf } from "../runtime/repository.ts";
import type { RevisionGroup } from "../runtime/revision-group.ts";
import type { DeploymentRuntime } from "../runtime/runtime.ts";
import { awakeServedDeployments, markAwake, markSleeping, sleepingDeployments } from "./repository.ts";

/** How long an agent process may take to say what keeps it awake before it counts as busy. */
const ACTIVITY_TIMEOUT_MS = 5_000;
/** The longest delay setTimeout keeps (beyond it, Node fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A deployment asleep, or on its way in or out: `falling` while its processes stop,
 * `asleep` once they have, `waking` from the first call of `wake` until its processes
 * are started again (the router then finds them through `target`). `settled` is the
 * end of the last step begun, so a wake during the fall starts once the fall is over.
 */
interface Sleep {
  phase: "falling" | "asleep" | "waking";
  settled: Promise<void>;
  timer?: NodeJS.Timeout;
  forgotten?: boolean;
}

/**
 * Lets idle deployments sleep and wakes them (docs/decisions/0039). Each tick looks at
 * the deployments that serve a revision and may sleep (their own setting, else the
 * control plane's default): one whose router saw no request for the set number of
 * minutes is asked, over its agent's IPC channel, whether a run executes or waits, and
 * when its next cron or delayed run falls due. With nothing underway and nothing due
 * within a minute, its processes stop and its embedded database closes; its record
 * says it sleeps, and when its scheduled work will wake it. The router wakes it on the
 * next request and holds that request while the processes start.
 */
export class DeploymentSleeper {
  private readonly sleeps = new Map<string, Sleep>();
  /** When an agent last said a run was underway (or could not say): idle time counts from there too. */
  private readonly busyAt = new Map<string, number>();
  private ticker: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly runtime: DeploymentRuntime,
    private readonly unserved: UnservedRevisions,
  ) {
    runtime.onPromote((group) => this.promoted(group));
  }

  /** Takes over the deployments a previous control plane left asleep, then ticks. */
  async start(): Promise<void> {
    for (const row of await sleepingDeployments(this.deps.db)) {
      const sleep: Sleep = { phase: "asleep", settled: Promise.resolve() };
      this.sleeps.set(row.id, sleep);
      this.scheduleWake(row.id, sleep, row.wake_at);
    }
    const { sleepMinuteMs } = this.deps.settings;
    // A quarter of a minute between looks: a deployment sleeps at most 15 s after its time.
    this.ticker = setInterval(() => void this.tick(), Math.max(100, Math.round(sleepMinuteMs / 4)));
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.ticker);
    for (const sleep of this.sleeps.values()) clearTimeout(sleep.timer);
    await Promise.all([...this.sleeps.values()].map((sleep) => sleep.settled));
  }

  /**
   * Starts a sleeping deployment's processes (the router asks for a request it holds;
   * a timer for a cron or a delayed run). True when it was asleep or is waking: the
   * caller may wait for it; false when it is not asleep.
   */
  wake(deploymentId: string, why = "a request arrived"): boolean {
    const sleep = this.sleeps.get(deploymentId);
    if (!sleep || sleep.forgotten) return false;
    if (sleep.phase === "waking") return true;
    sleep.phase = "waking";
    clearTimeout(sleep.timer);
    sleep.settled = sleep.settled
      .then(() => this.startAgain(deploymentId, why))
      .catch((error) => this.deps.log.error({ err: error, deployment_id: deploymentId }, "waking a deployment failed"))
      .finally(() => {
        if (this.sleeps.get(deploymentId) === sleep) this.sleeps.delete(deploymentId);
      });
    return true;
  }

  /** Whether the deployment sleeps or is on its way in or out of sleep. */
  sleeping(deploymentId: string): boolean {
    return this.sleeps.has(deploymentId);
  }

  /** The deployment is being deleted: no wake any more; resolves once a fall or a wake under way is over. */
  async forget(deploymentId: string): Promise<void> {
    this.busyAt.delete(deploymentId);
    const sleep = this.sleeps.get(deploymentId);
    if (!sleep) return;
    sleep.forgotten = true;
    clearTimeout(sleep.timer);
    await sleep.settled;
    if (this.sleeps.get(deploymentId) === sleep) this.sleeps.delete(deploymentId);
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const row of await awakeServedDeployments(this.deps.db)) {
        const minutes = row.sleep_after_minutes ?? this.deps.settings.sleepAfterMinutes;
        if (minutes > 0 && !this.sleeps.has(row.id)) await this.considerSleep(row.id, minutes);
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, "looking for idle deployments failed; trying again on the next tick");
    } finally {
      this.ticking = false;
    }
  }

  /** Puts the deployment to sleep if it has been idle for `minutes` and its agent has nothing underway or due soon. */
  private async considerSleep(deploymentId: string, minutes: number): Promise<void> {
    const { sleepMinuteMs } = this.deps.settings;
    const group = this.runtime.target(deploymentId);
    if (!group || group.inFlight > 0) return;
    const quietSince = Math.max(group.lastActiveAt, this.busyAt.get(deploymentId) ?? 0);
    if (Date.now() - quietSince < minutes * sleepMinuteMs) return;
    const replica = group.processes.find((candidate) => candidate.endpoint);
    if (!replica) return;
    const activity = await replica.activity(ACTIVITY_TIMEOUT_MS);
    if (!activity || activity.busy) {
      this.busyAt.set(deploymentId, Date.now());
      return;
    }
    const dueInMs = activity.next_due_in_seconds === null ? undefined : activity.next_due_in_seconds * 1000;
    // Scheduled work within the next minute: stay up for it (it makes a run, which keeps it awake).
    if (dueInMs !== undefined && dueInMs <= sleepMinuteMs) return;
    // A request may have come while the agent answered: then it is not idle any more.
    if (this.runtime.target(deploymentId) !== group || group.inFlight > 0 || group.lastActiveAt > quietSince) return;
    // Woken a minute before its scheduled work: a start takes seconds, and a late firing still fires (catch-up).
    const wakeAt = dueInMs === undefined ? null : new Date(Date.now() + dueInMs - sleepMinuteMs);
    this.fallAsleep(deploymentId, group, minutes, wakeAt);
  }

  private fallAsleep(deploymentId: string, group: RevisionGroup, minutes: number, wakeAt: Date | null): void {
    const sleep: Sleep = { phase: "falling", settled: Promise.resolve() };
    this.sleeps.set(deploymentId, sleep);
    // Called at once, not after an await: from here on the router finds nothing serving and wakes it.
    const stopping = this.runtime.sleep(deploymentId);
    sleep.settled = (async () => {
      if (!(await stopping)) {
        // Something else of it runs (a new revision starting): it stays awake.
        if (this.sleeps.get(deploymentId) === sleep && sleep.phase === "falling") this.sleeps.delete(deploymentId);
        return;
      }
      await markSleeping(this.deps.db, deploymentId, this.deps.now(), wakeAt);
      group.log.info(
        `No requests, no run underway and no cron due for ${minutes} min: asleep, its processes stopped; the next request` +
          (wakeAt ? `, or its scheduled work at ${wakeAt.toISOString()},` : "") +
          " starts them again.",
      );
      await group.log.flush();
      this.busyAt.delete(deploymentId);
      if (this.sleeps.get(deploymentId) !== sleep || sleep.phase !== "falling") return;
      sleep.phase = "asleep";
      this.scheduleWake(deploymentId, sleep, wakeAt);
    })().catch((error) => this.deps.log.error({ err: error, deployment_id: deploymentId }, "putting a deployment to sleep failed"));
  }

  private scheduleWake(deploymentId: string, sleep: Sleep, at: Date | null): void {
    if (!at) return;
    const delay = new Date(at).getTime() - Date.now();
    sleep.timer = setTimeout(
      () => {
        if (delay > MAX_TIMER_MS) this.scheduleWake(deploymentId, sleep, at);
        else this.wake(deploymentId, "a cron or a delayed run is due");
      },
      Math.max(0, Math.min(delay, MAX_TIMER_MS)),
    );
    sleep.timer.unref();
  }

  private async startAgain(deploymentId: string, why: string): Promise<void> {
    if (this.sleeps.get(deploymentId)?.forgotten) return;
    // A revision deployed meanwhile serves already.
    if (!this.runtime.target(deploymentId)) {
      const served = await activeRevisionOf(this.deps.db, deploymentId);
      if (!served) return;
      await serveAgain(this.deps, this.runtime, served, `Waking (${why}): starting this revision again.`, this.unserved);
    }
    await markAwake(this.deps.db, deploymentId);
  }

  /** A revision deployed while its deployment slept (or was falling asleep) wakes it: it serves now. */
  private promoted(group: RevisionGroup): void {
    const sleep = this.sleeps.get(group.deploymentId);
    if (!sleep || sleep.phase === "waking") return;
    clearTimeout(sleep.timer);
    this.sleeps.delete(group.deploymentId);
    void sleep.settled
      .then(() => markAwake(this.deps.db, group.deploymentId))
      .catch((error) => this.deps.log.warn({ err: error, deployment_id: group.deploymentId }, "marking a deployment awake failed"));
  }
}
