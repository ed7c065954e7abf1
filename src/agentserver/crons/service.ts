import type { Database } from "../../storage/database.ts";
import { badRequest, invalidField, notFound } from "../../http/errors.ts";
import { systemAssistantId } from "../assistants/index.ts";
import { checkWebhookUrl, type WebhookPolicy } from "../runs/webhook.ts";
import { threadExists } from "../threads/repository.ts";
import type { CronAccess } from "./access.ts";
import { countCrons, deleteCron, getCron, insertCron, lockCron, searchCrons, updateCron, type CronFilter, type CronRow } from "./repository.ts";
import { Schedule, ScheduleError } from "./schedule.ts";
import type { CronCount, CronCreate, CronPatch, CronSearch } from "./schemas.ts";
import { isTimeZone } from "./zoned-time.ts";

interface CronServiceDeps {
  db: Database;
  assistants: { get(idOrGraphId: string): Promise<{ assistant_id: string }> };
  webhookPolicy: WebhookPolicy;
  now: () => Date;
  newId: () => string;
  /** A cron was created, changed or deleted: schedulers (every process) look again. */
  changed(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Payload keys that a PATCH replaces (metadata merges instead). */
const RUN_FIELDS = [
  "input",
  "config",
  "context",
  "webhook",
  "interrupt_before",
  "interrupt_after",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
  "durability",
  "checkpoint_during",
] as const;

/** Rules of crons: what a schedule may be, when it fires next, who sees it. */
export class CronService {
  constructor(private readonly deps: CronServiceDeps) {}

  /** A cron on `threadId`, or (null) one whose every firing runs on a new thread. */
  async create(threadId: string | null, body: CronCreate, access: CronAccess = {}): Promise<CronRow> {
    const { deps } = this;
    const schedule = parseSchedule(body.schedule, body.timezone ?? null);
    if (body.webhook) checkWebhookUrl(body.webhook, deps.webhookPolicy);
    const onRunCompleted = threadId === null ? (body.on_run_completed ?? "delete") : threadRunCompleted(body.on_run_completed);
    const assistant = await deps.assistants.get(body.assistant_id);
    if (threadId !== null) {
      if (!(await threadExists(deps.db, threadId))) throw notFound(`Thread ${threadId} not found`);
    }
    const endTime = body.end_time ? new Date(body.end_time) : null;
    const created = await insertCron(deps.db, {
      cron_id: deps.newId(),
      assistant_id: assistant.assistant_id,
      thread_id: threadId,
      user_id: access.userId ?? null,
      schedule: body.schedule,
      timezone: body.timezone ?? null,
      end_time: endTime,
      enabled: body.enabled ?? true,
      on_run_completed: onRunCompleted,
      payload: withoutNulls(body),
      metadata: body.metadata ?? {},
      next_run_date: nextFiring(schedule, deps.now(), endTime),
    });
    await deps.changed();
    return created;
  }

  async get(cronId: string, access: CronAccess = {}): Promise<CronRow> {
    const cron = await getCron(this.deps.db, cronId, scopeOf(access));
    if (!cron) throw notFound(`Cron ${cronId} not found`);
    return cron;
  }

  async search(body: CronSearch, access: CronAccess = {}): Promise<{ rows: CronRow[]; total: number; next?: number }> {
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    const filter = { ...this.filterOf(body, access), enabled: body.enabled ?? undefined };
    const { rows, total } = await searchCrons(this.deps.db, filter, {
      limit,
      offset,
      sortBy: body.sort_by ?? "created_at",
      sortOrder: body.sort_order ?? "desc",
    });
    return { rows, total, next: offset + rows.length < total ? offset + rows.length : undefined };
  }

  count(body: CronCount, access: CronAccess = {}): Promise<number> {
    return countCrons(this.deps.db, this.filterOf(body, access));
  }

  /** Changes a cron; a new schedule, zone, end or enabling counts its next firing from now. */
  async update(cronId: string, patch: CronPatch, access: CronAccess = {}): Promise<CronRow> {
    const given = Object.entries(patch).filter(([key, value]) => value !== undefined && (value !== null || key === "end_time"));
    if (!given.length) throw badRequest("Request body cannot be empty");
    if (patch.webhook) checkWebhookUrl(patch.webhook, this.deps.webhookPolicy);
    const updated = await this.deps.db.transaction(async (tx) => {
      const cron = await lockCron(tx, cronId, scopeOf(access));
      if (!cron) throw notFound(`Cron ${cronId} not found`);
      const next: CronRow = { ...cron, payload: { ...cron.payload } };
      if (patch.schedule != null) next.schedule = patch.schedule;
      if (patch.timezone != null) next.timezone = patch.timezone;
      if (patch.end_time !== undefined) next.end_time = patch.end_time === null ? null : new Date(patch.end_time);
      if (patch.enabled != null) next.enabled = patch.enabled;
      if (patch.on_run_completed != null) {
        next.on_run_completed = cron.thread_id === null ? patch.on_run_completed : threadRunCompleted(patch.on_run_completed);
      }
      for (const field of RUN_FIELDS) {
        if (patch[field] === undefined) continue;
        if (patch[field] === null) delete next.payload[field];
        else next.payload[field] = patch[field];
      }
      if (patch.metadata != null) {
        next.metadata = { ...cron.metadata, ...patch.metadata };
        next.payload.metadata = next.metadata;
      }
      for (const key of ["schedule", "timezone", "enabled", "on_run_completed"] as const) {
        if (patch[key] != null) next.payload[key] = patch[key];
      }
      if (patch.end_time === null) delete next.payload.end_time;
      else if (patch.end_time !== undefined) next.payload.end_time = patch.end_time;
      const timing = patch.schedule != null || patch.timezone != null || patch.end_time !== undefined || patch.enabled != null;
      if (timing) next.next_run_date = nextFiring(parseSchedule(next.schedule, next.timezone), this.deps.now(), next.end_time);
      return updateCron(tx, next);
    });
    await this.deps.changed();
    return updated;
  }

  async delete(cronId: string, access: CronAccess = {}): Promise<void> {
    if (!(await deleteCron(this.deps.db, cronId, scopeOf(access)))) throw notFound(`Cron ${cronId} not found`);
    await this.deps.changed();
  }

  private filterOf(body: CronCount, access: CronAccess): CronFilter {
    const filter = scopeOf(access);
    if (body.metadata) filter.metadata = [...(filter.metadata ?? []), body.metadata];
    if (body.thread_id) filter.threadId = body.thread_id;
    // A graph id names its system assistant, as everywhere else in the API.
    if (body.assistant_id) filter.assistantId = UUID.test(body.assistant_id) ? body.assistant_id : systemAssistantId(body.assistant_id);
    return filter;
  }
}

/** The schedule, or a 422 naming the field at fault. */
function parseSchedule(expression: string, timeZone: string | null): Schedule {
  if (timeZone !== null && !isTimeZone(timeZone)) {
    throw invalidField(["body", "timezone"], `unknown time zone ${JSON.stringify(timeZone)}; use an IANA name such as "America/New_York"`);
  }
  try {
    return Schedule.parse(expression, timeZone);
  } catch (error) {
    if (error instanceof ScheduleError) throw invalidField(["body", "schedule"], error.message);
    throw error;
  }
}

/** The first firing after `now`, or null when none comes before `endTime`. */
function nextFiring(schedule: Schedule, now: Date, endTime: Date | null): Date | null {
  const next = schedule.nextAfter(now.getTime());
  if (next === undefined) throw invalidField(["body", "schedule"], "never fires (no such date in the coming years)");
  if (endTime && next > endTime.getTime()) return null;
  return new Date(next);
}

/**
 * A thread cron's runs use the cron's thread, which no run deletes: "keep" is what
 * happens anyway (the vendor stores nothing); "delete" cannot be honoured.
 */
function threadRunCompleted(value: "delete" | "keep" | null | undefined): null {
  if (value === "delete") {
    throw invalidField(["body", "on_run_completed"], '"delete" applies to crons without a thread (POST /runs/crons); a thread cron\'s runs keep their thread');
  }
  return null;
}

function scopeOf(access: CronAccess): CronFilter {
  return access.filters && Object.keys(access.filters).length ? { metadata: [access.filters] } : {};
}

function withoutNulls(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null && value !== undefined));
}
