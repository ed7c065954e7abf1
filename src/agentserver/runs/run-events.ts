import type { Queryable } from "../../storage/database.ts";
import type { RunEvent } from "../stream/broker.ts";

/** Keeps a resumable run's output so a client can replay it after the run ended. */
export async function persistRunEvents(db: Queryable, runId: string, events: RunEvent[]): Promise<void> {
  const chunkSize = 500;
  for (let start = 0; start < events.length; start += chunkSize) {
    const slice = events.slice(start, start + chunkSize);
    const params: unknown[] = [runId];
    const rows = slice.map((e, i) => {
      params.push(e.id, e.event, JSON.stringify(e.data ?? null));
      return `($1, $${i * 3 + 2}, $${i * 3 + 3}, $${i * 3 + 4}::jsonb)`;
    });
    await db.query(`INSERT INTO run_events (run_id, seq, event, data) VALUES ${rows.join(", ")} ON CONFLICT DO NOTHING`, params);
  }
}

/** The stored events after `afterId`, a page at a time, so a replay holds one page, not the run. */
export async function* loadRunEvents(db: Queryable, runId: string, afterId: number, pageSize = 500): AsyncGenerator<RunEvent> {
  for (let after = afterId; ; ) {
    const page = await db.query<RunEvent>(
      "SELECT seq AS id, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
      [runId, after, pageSize],
    );
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.id;
  }
}
