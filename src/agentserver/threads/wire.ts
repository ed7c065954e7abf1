import { follow, type ExtractPath } from "./extract.ts";
import type { ThreadRow } from "./repository.ts";
import type { Thread, ThreadSelectField } from "./schemas.ts";

const iso = (value: Date | string) => new Date(value).toISOString();

interface ThreadView {
  /** Only these fields (search `select`); all when absent. */
  select?: readonly ThreadSelectField[] | null;
  /** Adds `ttl` (GET ?include=ttl). */
  includeTtl?: boolean;
  /** Adds `extracted` (search `extract`). */
  extract?: Array<[string, ExtractPath]>;
}

/** A thread row as the vendor's Thread. */
export function toThread(row: ThreadRow, view: ThreadView = {}): Thread {
  const full: Thread = {
    thread_id: row.thread_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    state_updated_at: iso(row.state_updated_at),
    metadata: row.metadata ?? {},
    config: row.config ?? {},
    status: row.status,
    values: row.values ?? null,
    interrupts: row.interrupts ?? {},
    error: row.error ?? null,
  };
  const thread: Thread = view.select?.length ? pick(full, view.select) : full;
  if (view.includeTtl && row.ttl) {
    thread.ttl = {
      strategy: row.ttl.strategy,
      ttl_minutes: row.ttl.ttl_minutes,
      expires_at: row.expires_at ? iso(row.expires_at) : null,
    };
  }
  if (view.extract?.length) {
    const roots: Record<string, unknown> = { values: row.values, metadata: row.metadata, config: row.config, interrupts: row.interrupts };
    thread.extracted = Object.fromEntries(view.extract.map(([alias, path]) => [alias, follow(roots[path.root], path.steps)]));
  }
  return thread;
}

function pick(thread: Thread, fields: readonly ThreadSelectField[]): Thread {
  const out: Record<string, unknown> = {};
  for (const field of fields) out[field] = thread[field];
  return out as Thread;
}
