import { isOpen, isOver, type StreamBroker } from "./broker.ts";
import type { RunEnd, RunJoin, RunJoinOptions, RunStreamReader } from "./run-streams.ts";

/** The reader's view of the broker (run-streams.ts): the join of a run stream, and its end. */
export function runStreamReader(broker: StreamBroker): RunStreamReader {
  return {
    join: (runId, options) => joinRun(broker, runId, options),
    ended: (runId, signal) => runEnded(broker, runId, signal),
  };
}

/**
 * Joins a run wherever it executes. A run this process neither executes nor follows
 * (queued before a restart, executing in another process, handed back by this one) is
 * followed here, and with a relay its events are asked for from where it executes,
 * until `signal` aborts. A run whose record says it ended while the channel here never
 * heard so (the notification was lost) ends once what its executor still holds came.
 */
export function joinRun(broker: StreamBroker, runId: string, options: RunJoinOptions): RunJoin {
  const { run, signal } = options;
  const state = broker.stateOf(runId);
  if (!run.finished && !isOpen(state) && !isOver(state)) broker.follow(runId, run.threadId);
  else if (state === undefined) return notHeld(options.afterId ?? 0);

  const stopRelay = broker.streamFromElsewhere(runId);
  if (signal.aborted) stopRelay();
  else signal.addEventListener("abort", stopRelay, { once: true });
  if (run.finished) broker.endFollowed(runId);

  const replay = options.replay ?? false;
  const after = options.afterId ?? (replay ? 0 : broker.lastId(runId));
  const events = broker.join(runId, { afterId: options.afterId, replay, signal });
  return {
    held: true,
    after,
    get open() {
      return isOpen(broker.stateOf(runId));
    },
    [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](),
  };
}

function notHeld(after: number): RunJoin {
  return { held: false, after, open: false, async *[Symbol.asyncIterator]() {} };
}

/** See RunStreamReader.ended. */
export function runEnded(broker: StreamBroker, runId: string, signal: AbortSignal): Promise<RunEnd | undefined> {
  return new Promise((resolve) => {
    let stop: () => void = () => undefined;
    const done = (end?: RunEnd) => {
      stop();
      signal.removeEventListener("abort", left);
      resolve(end);
    };
    const left = () => done();
    if (signal.aborted) return done();
    signal.addEventListener("abort", left, { once: true });
    stop = broker.subscribe(runId, { replay: false }, (event) => {
      if (event === "end") done({ lastId: broker.lastId(runId), handedOver: broker.stateOf(runId) === "handedOver" });
    });
  });
}
