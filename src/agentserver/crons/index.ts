import type { Database } from "../../storage/database.ts";
import type { RunLifecycle } from "../runs/lifecycle.ts";
import type { WebhookPolicy } from "../runs/webhook.ts";
import { CronScheduler, cronsChannel, type CronSchedulerOptions } from "./scheduler.ts";
import { CronService } from "./service.ts";

export { registerCronRoutes } from "./routes.ts";

/** Default of SLIPWAY_CRON_CATCH_UP_SECONDS: how late a firing may be and still fire on its own. */
export const DEFAULT_CATCH_UP_SECONDS = 60;

export function catchUpSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SLIPWAY_CRON_CATCH_UP_SECONDS;
  if (raw === undefined || raw === "") return DEFAULT_CATCH_UP_SECONDS;
  const value = Number(raw);
  // A value that does not read stops start-up rather than falling back unseen.
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`SLIPWAY_CRON_CATCH_UP_SECONDS must be a number of seconds (0 or more), not ${JSON.stringify(raw)}`);
  return value;
}

interface CronDeps {
  db: Database;
  assistants: { get(idOrGraphId: string): Promise<{ assistant_id: string }> };
  webhookPolicy: WebhookPolicy;
  now: () => Date;
  newId: () => string;
  /** Told of the runs firings queue (runs/lifecycle.ts). */
  lifecycle: Pick<RunLifecycle, "emit">;
  /** Stops a run displaced by an interrupt / rollback cron (RunService.cancel). */
  stopRun(runId: string, action: "interrupt" | "rollback"): Promise<void>;
  log: { error(obj: unknown, msg: string): void };
}

/** The crons of one agent server: the service behind the routes, and the scheduler. */
export function createCrons(deps: CronDeps, options: Partial<CronSchedulerOptions> = {}): { service: CronService; scheduler: CronScheduler } {
  const { db } = deps;
  const service = new CronService({ ...deps, changed: () => db.notify(cronsChannel(db.schema), "changed") });
  const scheduler = new CronScheduler(deps, { catchUpSeconds: catchUpSecondsFromEnv(), ...options });
  return { service, scheduler };
}
