/**
 * What the run path (runs/) sees of streams: views of the broker, each as narrow as its
 * user. The worker publishes, the stream responses join, and the lifecycle listeners
 * open, follow and end channels. server.ts builds the broker and hands out the views.
 */

/** An event of a run's stream, as its readers get it. */
export interface RunEvent {
  /** Position in the run's stream, starting at 1; sent as the SSE `id`. */
  id: number;
  event: string;
  data: unknown;
}

/** An event as a run's attempt publishes it. */
export interface PublishedEvent {
  event: string;
  data: unknown;
  /** The attempt that sends it: an event of an earlier attempt (still running after it lost its lease) is dropped. */
  attempt?: number;
}

export interface RunStreamWriter {
  /** Sends an event to the run's readers; returns it with its id, or undefined when dropped (the run does not execute here, or a later attempt does). */
  publish(runId: string, event: PublishedEvent): RunEvent | undefined;
}

export interface RunJoinOptions {
  /** Events after this id; without it, from the start when `replay` is set, else live ones only. */
  afterId?: number;
  replay?: boolean;
  /** Ends the iteration, and with it the join's hold on the run (a relay asked for its events). */
  signal: AbortSignal;
  /** What the run's record says: its thread, and whether it ended. */
  run: { threadId: string; finished: boolean };
}

/**
 * A run's events, read at the reader's pace until the run's stream ends; a reader that
 * fell behind its limit gets `FellBehind` (stream/pull-queue.ts) after what it held.
 */
export interface RunJoin extends AsyncIterable<RunEvent> {
  /** False: the run ended and none of its stream is held here any more (the iteration is empty; stored events are the caller's). */
  readonly held: boolean;
  /** The id of the last event before the first this join yields. */
  readonly after: number;
  /** The run's stream here is still open (the run is queued or executing). */
  readonly open: boolean;
}

/** How a run's stream ended here. */
export interface RunEnd {
  /** The id of the run's last event. */
  lastId: number;
  /** The run went back to the queue and goes on elsewhere (its stream did not end for good). */
  handedOver: boolean;
}

export interface RunStreamReader {
  join(runId: string, options: RunJoinOptions): RunJoin;
  /**
   * Resolves when the run's stream ends here (at once when it has); undefined when
   * `signal` aborts first. For a reader that fell behind: it stopped reading, and waits
   * for the end to read the stored events instead.
   */
  ended(runId: string, signal: AbortSignal): Promise<RunEnd | undefined>;
}

/** What the lifecycle listeners do to channels: a run queued, claimed here, ended, handed back, or let go by a failed attempt. */
export interface RunChannels {
  follow(runId: string, threadId: string): void;
  open(runId: string, threadId: string, attempt?: number): void;
  end(runId: string, options?: { attempt?: number; handedOver?: boolean }): void;
  release(runId: string, attempt: number): void;
}
