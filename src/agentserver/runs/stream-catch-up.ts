import type { Database } from "../../storage/database.ts";
import type { RunEvent, RunStreamReader } from "../stream/run-streams.ts";
import type { FellBehind } from "../stream/pull-queue.ts";
import type { SseWriter } from "../../http/sse.ts";
import { wireEventId } from "../stream/event-ids.ts";
import { getRun, loadRunEvents } from "./repository.ts";
import { isTerminal } from "../run-statuses.ts";

/**
 * A join whose reader fell behind (decision 0027). The events it missed are not held
 * for it any more. A resumable run's are stored when it ends: the stream waits for the
 * end, then goes on from the stored events after the last one sent, without a gap. Other
 * runs keep nothing: the stream ends with an `error` event naming the last event sent.
 */
export async function catchUp(
  sse: SseWriter,
  options: { db: Database; streams: RunStreamReader; runId: string; resumable: boolean; lastSent: number; reason: FellBehind },
  send: (event: RunEvent) => Promise<void>,
): Promise<void> {
  const { streams, runId, reason } = options;
  const lastWireId = wireEventId(options.lastSent);
  if (!options.resumable) {
    const detail = `the stream stops after event ${lastWireId}; this run's events are not stored (create it with stream_resumable: true to replay them)`;
    await sse.send("error", reason.payload(detail));
    return;
  }
  const end = await streams.ended(runId, sse.signal);
  // Handed back to the queue (shutdown): the run goes on elsewhere and its events are
  // not stored yet; the stream ends and the client joins again from its last event.
  if (!end || sse.signal.aborted || end.handedOver) return;
  let expected = options.lastSent + 1;
  for await (const event of loadRunEvents(options.db, runId, options.lastSent)) {
    if (sse.signal.aborted) return;
    if (event.id !== expected) break;
    await send(event);
    expected++;
  }
  // Stored events ending short of the run's last (an attempt that crashed kept none) are said, not skipped.
  if (expected <= end.lastId || (expected === options.lastSent + 1 && (await storedNothingOfAnEndedRun(options.db, runId)))) {
    await sse.send("error", reason.payload(`the stored events stop after event ${wireEventId(expected - 1)}`));
  }
}

/**
 * Nothing stored follows the reader's last event, and the run's last id is not known here
 * (`ended` says 0 once the channel was let go, 30 s after the end). A reader falls behind
 * only with events after its last, so they are missing, unless the run goes on elsewhere
 * (handed over): then the stream ends normally and the client joins again where it runs.
 */
async function storedNothingOfAnEndedRun(db: Database, runId: string): Promise<boolean> {
  const run = await getRun(db, runId);
  return !run || isTerminal(run.status);
}
