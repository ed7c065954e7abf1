import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../storage/database.ts";
import type { RunEvent, RunStreamReader } from "../stream/run-streams.ts";
import { storedEventId, wireEventId } from "../stream/event-ids.ts";
import { eventInModes } from "../stream/modes.ts";
import { SseWriter } from "../../http/sse.ts";
import { FellBehind } from "../stream/pull-queue.ts";
import { loadRunEvents, type RunRow } from "./repository.ts";
import { catchUp } from "./stream-catch-up.ts";
import { isTerminal } from "../run-statuses.ts";

export interface StreamRunOptions {
  db: Database;
  streams: RunStreamReader;
  run: RunRow;
  /** Where the run lives: `/threads/<t>/runs/<r>` or `/runs/<r>` for stateless runs. */
  runPath: string;
  /** Replay: everything after this id; -1 replays from the start. Undefined: live only... */
  lastEventId?: number;
  /** Replay everything buffered (the stream of the request that created the run). */
  fromStart: boolean;
  /** Called when the client disconnects before the run ended. */
  onDisconnect?: () => void;
  /** Only these event families are sent (join stream's stream_mode). */
  modes?: string[];
  heartbeatMs?: number;
}

/**
 * Streams a run's events as SSE until the run ends. Resumable runs that ended a while
 * ago are replayed from the run_events table.
 */
export async function streamRun(request: FastifyRequest, reply: FastifyReply, options: StreamRunOptions): Promise<void> {
  const { run } = options;
  const headers: Record<string, string> = { "Content-Location": options.runPath };
  if (run.kwargs.stream_resumable) headers.Location = `${options.runPath}/stream`;
  const sse = new SseWriter(request, reply, { headers, heartbeatMs: options.heartbeatMs });
  try {
    await streamTo(sse, options);
  } finally {
    // The head is sent: a failure (a lost database) can no longer become an error
    // reply, but the stream must not stay open with nothing to come.
    sse.end();
  }
}

async function streamTo(sse: SseWriter, options: StreamRunOptions): Promise<void> {
  const { run, streams } = options;
  const send = async (e: RunEvent) => {
    if (eventInModes(e.event, options.modes)) await sse.send(e.event, e.data, wireEventId(e.id));
  };
  const afterId = options.lastEventId !== undefined ? storedEventId(options.lastEventId) : undefined;

  const id = run.run_id;
  // Over when the run ends, the client leaves, or shutdown ends every open stream; each
  // event waits for the client to take the one before (backpressure).
  const finished = isTerminal(run.status);
  const events = streams.join(id, { afterId, replay: options.fromStart, signal: sse.signal, run: { threadId: run.thread_id, finished } });
  if (!events.held) {
    // Ended a while ago: a resumable run's saved events are replayed.
    if (run.kwargs.stream_resumable && afterId !== undefined) {
      for await (const event of loadRunEvents(options.db, id, afterId)) {
        if (sse.signal.aborted) break;
        await send(event);
      }
    }
    return;
  }
  sse.onClose(() => {
    if (events.open) options.onDisconnect?.();
  });
  // The id of the last event read: where a reader that fell behind goes on from.
  let lastSent = events.after;
  try {
    for await (const event of events) {
      await send(event);
      lastSent = event.id;
    }
  } catch (error) {
    if (!(error instanceof FellBehind)) throw error;
    const resumable = Boolean(run.kwargs.stream_resumable);
    await catchUp(sse, { db: options.db, streams, runId: id, resumable, lastSent, reason: error }, send);
  }
}

/** Parses the Last-Event-ID header; `-1` means "from the start". */
export function parseLastEventId(value: unknown): number | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
}
