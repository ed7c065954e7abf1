import type { Queryable } from "../../storage/database.ts";
import { secondsUntilNextFiring } from "../crons/repository.ts";
import { anyRunUnderway, secondsUntilNextDueRun } from "../runs/queue-repository.ts";

/**
 * What keeps a deployment awake, as its control plane asks before letting it sleep
 * (docs/decisions/0039): a run executing or ready to be claimed, and when the next
 * scheduled work falls due (a cron's next firing, a delayed run's start) so that the
 * control plane can wake it in time while its processes are stopped.
 */
export interface AgentActivity {
  busy: boolean;
  /** Seconds until the next cron firing or delayed run (0 or less: due now); null: nothing scheduled. */
  next_due_in_seconds: number | null;
}

export async function agentActivity(db: Queryable): Promise<AgentActivity> {
  const [busy, run, cron] = await Promise.all([anyRunUnderway(db), secondsUntilNextDueRun(db), secondsUntilNextFiring(db)]);
  const due = [run, cron].filter((seconds): seconds is number => seconds !== undefined);
  return { busy, next_due_in_seconds: due.length ? Math.min(...due) : null };
}
