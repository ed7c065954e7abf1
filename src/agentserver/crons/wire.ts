import type { CronRow } from "./repository.ts";
import type { Cron, CronSelectField } from "./schemas.ts";

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

/** A cron as the vendor's API shows it. */
export function toCron(row: CronRow): Cron {
  return {
    cron_id: row.cron_id,
    assistant_id: row.assistant_id,
    thread_id: row.thread_id,
    on_run_completed: row.on_run_completed,
    end_time: iso(row.end_time),
    schedule: row.schedule,
    timezone: row.timezone,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    user_id: row.user_id,
    payload: row.payload ?? {},
    next_run_date: iso(row.next_run_date),
    metadata: row.metadata ?? {},
    enabled: row.enabled,
  };
}

/** Only the fields a search's `select` asks for (all without one). */
export function selectFields(cron: Cron, select: readonly CronSelectField[] | null | undefined): Partial<Cron> {
  if (!select?.length) return cron;
  return Object.fromEntries(select.map((field) => [field, cron[field]])) as Partial<Cron>;
}
