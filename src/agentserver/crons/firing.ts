import type { Database, Queryable } from "../../storage/database.ts";
import { queueAnnouncement, runsChannel } from "../runs/announcements.ts";
import type { RunLifecycle } from "../runs/lifecycle.ts";
import { announceAtCommit, enqueueRunFast } from "../runs/queue-repository.ts";
import { activeRunsOfThread, insertRun, type RunRow } from "../runs/repository.ts";
import type { MultitaskStrategy } from "../runs/schemas.ts";
import { lockThread, markThreadBusy } from "../threads/repository.ts";
import { advanceCron, claimDueCron, recordFiring, type DueCron } from "./repository.ts";
import { runKwargsOf } from "./run-kwargs.ts";
import { Schedule } from "./schedule.ts";

export interface CronFiringDeps {
  db: Database;
  /** Recorded with each firing (which process fired it). */
  firedBy: string;
  newId: () => string;
  /**
   * How late a firing may be and still fire on its own. Firings missed for longer (the
   * server was down) are folded into one, fired now; see planFiring.
   */
  catchUpSeconds: number;
  /** Told of each run a firing queued, once it is committed (announced already). */
  lifecycle: Pick<RunLifecycle, "emit">;
  /** Stops a run that an `interrupt` / `rollback` thread cron displaced (RunService.cancel). */
  stopRun(runId: string, action: "interrupt" | "rollback"): Promise<void>;
  /** Told of firings that could not be planned (a stored schedule that no longer reads). */
  log: { error(obj: unknown, msg: string): void };
}

export interface Firing {
  cronId: string;
  scheduledFor: Date;
  outcome: "queued" | "rejected" | "unschedulable";
  run?: Pick<RunRow, "run_id" | "thread_id">;
  coalescedUntil: Date | null;
  next: Date | null;
}

/**
 * Fires the most overdue cron, if one is due and no other process is firing it: in one
 * transaction, claims it (repository.ts, claimDueCron), queues its run, records the
 * firing, advances `next_run_date`, and announces the run to the workers. The NOTIFY is
 * sent inside the transaction, so it goes out at the commit: never for a firing rolled
 * back, and never lost to a process that stops between the commit and the lifecycle's
 * `queued` (told after, as `announced`). Undefined when nothing is due.
 */
export async function fireNextDueCron(deps: CronFiringDeps): Promise<Firing | undefined> {
  let displaced: { runs: RunRow[]; action: "interrupt" | "rollback" } | undefined;
  let queuedRun: RunRow | undefined;
  const firing = await deps.db.transaction(async (tx): Promise<Firing | undefined> => {
    const cron = await claimDueCron(tx);
    if (!cron) return undefined;
    const plan = planFiring(cron, deps.catchUpSeconds);
    if (!plan) {
      deps.log.error({ cron_id: cron.cron_id, schedule: cron.schedule, timezone: cron.timezone }, "cron schedule no longer reads; it will not fire again");
      await advanceCron(tx, cron.cron_id, null);
      return { cronId: cron.cron_id, scheduledFor: cron.next_run_date!, outcome: "unschedulable", coalescedUntil: null, next: null };
    }
    const queued = await queueRun(tx, cron, deps.newId);
    if (queued.displaced?.length) displaced = { runs: queued.displaced, action: queued.strategy as "interrupt" | "rollback" };
    await recordFiring(tx, {
      cron_id: cron.cron_id,
      scheduled_for: plan.scheduledFor,
      outcome: queued.run ? "queued" : "rejected",
      run_id: queued.run?.run_id ?? null,
      coalesced_until: plan.coalescedUntil,
      fired_by: deps.firedBy,
    });
    await advanceCron(tx, cron.cron_id, plan.next);
    if (queued.run) await announceAtCommit(tx, runsChannel(deps.db.schema), queueAnnouncement(queued.run.run_id, 0, queued.run.thread_id));
    queuedRun = queued.run;
    return {
      cronId: cron.cron_id,
      scheduledFor: plan.scheduledFor,
      outcome: queued.run ? "queued" : "rejected",
      run: queued.run,
      coalescedUntil: plan.coalescedUntil,
      next: plan.next,
    };
  });
  // Committed: the runs this firing displaced stop now (as RunService does for a request).
  for (const run of displaced?.runs ?? []) {
    await deps.stopRun(run.run_id, displaced!.action).catch((error) => {
      // It may have ended meanwhile (a 409 from cancel); anything else is worth a line.
      deps.log.error({ err: error, run_id: run.run_id }, "stopping a run displaced by a cron failed");
    });
  }
  if (queuedRun) await deps.lifecycle.emit("queued", { run: queuedRun, delaySeconds: 0, announced: true });
  return firing;
}

interface Plan {
  scheduledFor: Date;
  coalescedUntil: Date | null;
  next: Date | null;
}

/**
 * When the claimed firing counts as scheduled, and which firing comes next.
 *
 * A firing up to `catchUpSeconds` late (a busy moment, a process killed mid-firing, a
 * restart) fires on its own, and the next one is the schedule's next time after it:
 * every scheduled time fires, late ones in a quick burst. Beyond that the server was
 * down: the missed times are folded into this one firing (recorded as
 * `coalesced_until`) and the next is the first time after now, as the vendor does for
 * every late firing. A schedule every second should not queue a day of runs after a
 * day offline.
 */
function planFiring(cron: DueCron, catchUpSeconds: number): Plan | undefined {
  let schedule: Schedule;
  try {
    schedule = Schedule.parse(cron.schedule, cron.timezone);
  } catch {
    return undefined;
  }
  const scheduledFor = new Date(cron.next_run_date!);
  const now = new Date(cron.db_now);
  const late = now.getTime() - scheduledFor.getTime() > catchUpSeconds * 1000;
  const after = late ? now.getTime() : scheduledFor.getTime();
  const next = schedule.nextAfter(after);
  const ended = next === undefined || (cron.end_time !== null && next > new Date(cron.end_time).getTime());
  return { scheduledFor, coalescedUntil: late ? now : null, next: ended ? null : new Date(next) };
}

/**
 * The firing's run, queued as POST /runs (no thread) or POST /threads/{id}/runs would
 * queue it. On a busy thread, "reject" queues nothing (the vendor logs the refusal and
 * moves on; we record it), "interrupt" and "rollback" queue the run behind the active
 * ones and return them to be stopped once this commits.
 */
async function queueRun(tx: Queryable, cron: DueCron, newId: () => string): Promise<{ run?: RunRow; displaced?: RunRow[]; strategy: MultitaskStrategy }> {
  const strategy = ((cron.payload.multitask_strategy as MultitaskStrategy | undefined) ?? "enqueue") as MultitaskStrategy;
  const threadMetadata = { graph_id: cron.graph_id, assistant_id: cron.assistant_id };
  const fields = {
    run_id: newId(),
    assistant_id: cron.assistant_id,
    metadata: cron.metadata ?? {},
    kwargs: runKwargsOf(cron),
    multitask_strategy: strategy,
    afterSeconds: 0,
  };
  const stateless = cron.thread_id === null;
  const threadId = cron.thread_id ?? newId();
  const assistantMetadata = cron.assistant_metadata ?? {};
  const run = (await enqueueRunFast(tx, { ...fields, thread_id: threadId, newThread: stateless, threadMetadata, assistantMetadata }))?.run;
  if (run) return { run, strategy };
  if (stateless) throw new Error(`could not create a thread for cron ${cron.cron_id}`);
  // The thread is busy under reject / interrupt / rollback (or gone).
  const thread = await lockThread(tx, threadId);
  if (!thread) return { strategy };
  const active = await activeRunsOfThread(tx, threadId);
  if (strategy === "reject" && active.length) return { strategy };
  await markThreadBusy(tx, threadId, threadMetadata);
  const metadata = { ...assistantMetadata, ...thread.metadata, ...threadMetadata, ...fields.metadata };
  return { run: await insertRun(tx, { ...fields, metadata, thread_id: threadId }), displaced: active, strategy };
}
