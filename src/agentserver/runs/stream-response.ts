import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../storage/database.ts";
import { isOpen, isOver, type RunEvent, type StreamBroker } from "../stream/broker.ts";
import { storedEventId, wireEventId } from "../stream/event-ids.ts";
import { eventInModes } from "../stream/modes.ts";
import { SseWriter } from "../../http/sse.ts";
import { FellBehind } from "../stream/pull-queue.ts";
import { loadRunEvents, type RunRow } from "./repository.ts";
import { catchUp } from "./stream-catch-up.ts";
import { isTerminal } from "../run-statuses.ts";

export interface StreamRunOptions {
  db: Database;
  broker: StreamBroker;
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
  const { run, broker } = options;
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
  const { run, broker } = options;
  const send = async (e: RunEvent) => {
    if (eventInModes(e.event, options.modes)) await sse.send(e.event, e.data, wireEventId(e.id));
  };
  const afterId = options.lastEventId !== undefined ? storedEventId(options.lastEventId) : undefined;

  const id = run.run_id;
  const finished = isTerminal(run.status);
  const state = broker.stateOf(id);
  if (!finished && !isOpen(state) && !isOver(state)) {
    // A run queued before a restart, executing in another process, or handed back by
    // this one (it goes on elsewhere): follow it here.
    broker.follow(id, run.thread_id);
  } else if (state === undefined) {
    // Ended a while ago: a resumable run's saved events are replayed.
    if (run.kwargs.stream_resumable && afterId !== undefined) {
      for await (const event of loadRunEvents(options.db, id, afterId)) {
        if (sse.signal.aborted) break;
        await send(event);
      }
    }
    sse.end();
    return;
  }

  // Executed by another process (or not claimed yet): ask for its events from there.
  const stopRelay = broker.streamFromElsewhere(id);
  // The run ended, but the channel here following it has not heard so (the notification
  // may be lost): it ends once what the executor still holds came, or nothing more comes.
  if (finished) broker.endFollowed(id);
  sse.onClose(() => {
    if (isOpen(broker.stateOf(id))) options.onDisconnect?.();
  });
  // The id of the last event read: where a reader that fell behind goes on from.
  let lastSent = afterId ?? (options.fromStart ? 0 : broker.lastId(id));
  try {
    // Over when the run ends, the client leaves, or shutdown ends every open stream; each
    // event waits for the client to take the one before (backpressure).
    for await (const event of broker.join(id, { afterId, replay: options.fromStart, signal: sse.signal })) {
      await send(event);
      lastSent = event.id;
    }
  } catch (error) {
    if (!(error instanceof FellBehind)) throw error;
    const resumable = Boolean(run.kwargs.stream_resumable);
    await catchUp(sse, { db: options.db, broker, runId: id, resumable, lastSent, reason: error }, send);
  } finally {
    stopRelay();
  }
}

/** Parses the Last-Event-ID header; `-1` means "from the start". */
export function parseLastEventId(value: unknown): number | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
}
