import { PullQueue, type ReaderLimit } from "./pull-queue.ts";
import type { PublishedEvent, RunChannels, RunEvent, RunStreamWriter } from "./run-streams.ts";

type Listener = (event: RunEvent | "end") => void;

/** Where a join starts: after `afterId`, or (without it) from the start when `replay` is set, else live only. */
export interface JoinOptions {
  afterId?: number;
  replay: boolean;
  /** Ends the iteration (the client left, or the server shuts down). */
  signal?: AbortSignal;
}

/** What the broker needs of the relay between processes (relay.ts). */
export interface BrokerRelay {
  follow(runId: string): () => void;
  ended(runId: string): void;
}

/**
 * Where a run's channel stands:
 * - `following`: open; its events come from another process (relay.ts);
 * - `executing`: open; the run executes in this process;
 * - `ended`: over for good, followed from elsewhere;
 * - `executed`: over for good, executed here;
 * - `handedOver`: executed here until it went back to the queue (it goes on elsewhere).
 */
export type ChannelState = "following" | "executing" | "ended" | "executed" | "handedOver";

/** Events still come (the run is queued or executing). */
export const isOpen = (state: ChannelState | undefined): state is "following" | "executing" => state === "following" || state === "executing";
/** The run itself is over (not only its attempt here). */
export const isOver = (state: ChannelState | undefined): state is "ended" | "executed" => state === "ended" || state === "executed";

/** The id of the last event the channel's buffer keeps (it keeps the first ones). */
const lastKept = (channel: RunChannel): number => channel.events[channel.events.length - 1]?.id ?? 0;

interface RunChannel {
  threadId: string;
  events: RunEvent[];
  /** Id of the last event, buffered or not (the buffer is bounded, the count goes on). */
  lastId: number;
  listeners: Set<Listener>;
  state: ChannelState;
  /** The attempt whose events come now, and the id of the last event before its first. */
  attempt: number;
  attemptStart: number;
}

/** Events of a run held once, for every reader, while it runs and for `retainMs` after. */
export const BUFFERED_EVENTS = 50_000;

/**
 * What one reader (a join or a thread stream) may hold unread of the events only it
 * holds, before it is told it fell behind (decision 0027): about 8 MiB of event data, or
 * 10,000 events for small ones (each costs an object and a slot beyond its JSON).
 */
export const READER_LIMIT: ReaderLimit = { items: 10_000, bytes: 8 * 1024 * 1024 };

/** An event's size on the wire, near enough: its name and its data as JSON, measured once. */
const sizes = new WeakMap<RunEvent, number>();
export function eventSize(event: RunEvent): number {
  let size = sizes.get(event);
  if (size === undefined) {
    size = event.event.length + (JSON.stringify(event.data ?? null)?.length ?? 4);
    sizes.set(event, size);
  }
  return size;
}

/**
 * Fan-out of run output inside one process. The worker executing a run publishes
 * events; HTTP streams subscribe by run (join stream, the stream of the request that
 * created the run) or by thread (GET /threads/{id}/stream). A run executing in another
 * process (several agent servers on one PostgreSQL) is followed: relay.ts injects the
 * events that process sends.
 *
 * While a run is active every event is kept, so a subscriber that arrives a little
 * late (a join right after creation) still sees the whole run. After the run ends the
 * buffer is dropped after `retainMs`; resumable runs are also persisted by the run
 * engine (table run_events) for replay after that. The run path sees it through the
 * narrow views of run-streams.ts.
 */
export class StreamBroker implements RunStreamWriter, RunChannels {
  private readonly runs = new Map<string, RunChannel>();
  private readonly threadListeners = new Map<string, Set<(runId: string, event: RunEvent | "end") => void>>();
  private readonly retainMs: number;
  private readonly readerLimit: ReaderLimit;
  private readonly bufferedEvents: number;

  constructor(options: { retainMs?: number; readerLimit?: ReaderLimit; bufferedEvents?: number } = {}) {
    this.retainMs = options.retainMs ?? 30_000;
    this.readerLimit = options.readerLimit ?? READER_LIMIT;
    this.bufferedEvents = options.bufferedEvents ?? BUFFERED_EVENTS;
  }

  private readonly executeListeners = new Set<(runId: string) => void>();

  /**
   * Opens (or reopens, on a retry) the channel of a run this process executes. Ids go on
   * after the events already held, so a retry's stream continues the earlier one's.
   */
  open(runId: string, threadId: string, attempt = 1): void {
    const existing = this.runs.get(runId);
    const channel = existing && isOpen(existing.state) ? existing : this.newChannel(threadId, existing);
    channel.state = "executing";
    this.beginAttempt(channel, attempt);
    this.runs.set(runId, channel);
    for (const listener of this.executeListeners) listener(runId);
  }

  private newChannel(threadId: string, previous: RunChannel | undefined): RunChannel {
    return {
      threadId,
      events: previous?.events ?? [],
      lastId: previous?.lastId ?? 0,
      listeners: previous?.listeners ?? new Set(),
      state: "following",
      attempt: previous?.attempt ?? 0,
      attemptStart: previous?.attemptStart ?? 0,
    };
  }

  private beginAttempt(channel: RunChannel, attempt: number): void {
    channel.attempt = attempt;
    channel.attemptStart = channel.lastId;
  }

  /**
   * The attempt whose events the channel holds last, and the id before its first event.
   * A follower's relay numbers a new attempt's events after those it holds (relay.ts).
   */
  attemptOf(runId: string): { attempt: number; start: number } {
    const channel = this.runs.get(runId);
    return { attempt: channel?.attempt ?? 0, start: channel?.attemptStart ?? 0 };
  }

  /** A followed run's events now come from a later attempt (executing in another process). */
  followAttempt(runId: string, attempt: number): void {
    const channel = this.runs.get(runId);
    if (channel?.state === "following" && attempt > channel.attempt) this.beginAttempt(channel, attempt);
  }

  /**
   * Opens the channel of a run for its streams before (or without) executing it here:
   * its events come from the worker that claims it, in this process or, through the
   * relay, in another one. No-op when the channel exists.
   */
  follow(runId: string, threadId: string): void {
    const existing = this.runs.get(runId);
    if (existing && isOpen(existing.state)) return;
    this.runs.set(runId, this.newChannel(threadId, existing));
  }

  /**
   * Forgets a followed run that no stream listens to (it ended in another process). An
   * ended channel stays: it holds the run's events for `retainMs`, like any other.
   */
  dropFollowed(runId: string): void {
    const channel = this.runs.get(runId);
    if (channel?.state === "following" && channel.listeners.size === 0) this.runs.delete(runId);
  }

  private relay?: BrokerRelay;

  /** Lets `streamFromElsewhere` ask other processes for a run's events (relay.ts). */
  useRelay(relay: BrokerRelay): void {
    this.relay = relay;
  }

  /**
   * The run's record says it ended, but this channel following it never heard so (the
   * notification was lost with a dropped connection). It ends now, or, when the relay is
   * still bringing events to streams here, once they stopped coming.
   */
  endFollowed(runId: string): void {
    if (this.stateOf(runId) !== "following") return;
    if (this.relay) this.relay.ended(runId);
    else this.end(runId);
  }

  /**
   * A stream of this process subscribes to a run it does not execute: with a relay, the
   * executing process is asked for the events. Returns what to call when the stream ends.
   */
  streamFromElsewhere(runId: string): () => void {
    return this.relay && this.stateOf(runId) === "following" ? this.relay.follow(runId) : () => undefined;
  }

  /** Called whenever a run starts executing in this process. */
  onExecute(listener: (runId: string) => void): void {
    this.executeListeners.add(listener);
  }

  /** An event of a run executing elsewhere, with the id it has there; repeats are dropped. */
  inject(runId: string, record: RunEvent): void {
    const channel = this.runs.get(runId);
    if (channel?.state !== "following" || record.id <= channel.lastId) return;
    this.record(channel, record);
    for (const listener of channel.listeners) listener(record);
    for (const listener of this.threadListeners.get(channel.threadId) ?? []) listener(runId, record);
  }

  /** Where the run's channel stands; undefined: no channel here (never, or no longer, held). */
  stateOf(runId: string): ChannelState | undefined {
    return this.runs.get(runId)?.state;
  }

  /** The id of the run's last event held here (0: none). */
  lastId(runId: string): number {
    return this.runs.get(runId)?.lastId ?? 0;
  }

  /** The buffered events after `afterId`. */
  eventsAfter(runId: string, afterId: number): RunEvent[] {
    return (this.runs.get(runId)?.events ?? []).filter((event) => event.id > afterId);
  }

  /**
   * An event of a run executing here. With `attempt`, an event of an earlier attempt
   * (still running after it lost its lease and the run was claimed again here) is dropped.
   */
  publish(runId: string, { event, data, attempt }: PublishedEvent): RunEvent | undefined {
    const channel = this.runs.get(runId);
    if (channel?.state !== "executing") return undefined;
    if (attempt !== undefined && attempt !== channel.attempt) return undefined;
    const record: RunEvent = { id: channel.lastId + 1, event, data };
    this.record(channel, record);
    for (const listener of channel.listeners) listener(record);
    for (const listener of this.threadListeners.get(channel.threadId) ?? []) listener(runId, record);
    return record;
  }

  private record(channel: RunChannel, record: RunEvent): void {
    channel.lastId = record.id;
    if (channel.events.length < this.bufferedEvents) channel.events.push(record);
  }

  /**
   * The attempt executing here failed before it ended the run: the run stays leased until
   * the sweeper gives it another attempt, here or in another process. The channel goes
   * back to following, readers still attached: the next attempt's events reach them from
   * this process's worker (open) or through the relay. No-op unless that attempt executes here.
   */
  release(runId: string, attempt: number): void {
    const channel = this.runs.get(runId);
    if (channel?.state !== "executing" || channel.attempt !== attempt) return;
    channel.state = "following";
    // Its readers joined while it executed here, so none asked the relay: it is asked
    // for them until the run's stream ends, wherever the next attempt executes.
    if (this.relay && channel.listeners.size > 0) {
      const stop = this.relay.follow(runId);
      channel.listeners.add((event) => {
        if (event === "end") stop();
      });
    }
  }

  /**
   * Ends the run's stream for every subscriber. `attempt` fences the end of one attempt:
   * when a later attempt of the run executes here already, the channel is its. With
   * `handedOver` the run went back to the queue and goes on elsewhere: followers in
   * other processes keep their streams open for the next attempt (relay.ts).
   */
  end(runId: string, options: { attempt?: number; handedOver?: boolean } = {}): void {
    const channel = this.runs.get(runId);
    if (!channel || !isOpen(channel.state)) return;
    if (options.attempt !== undefined && channel.attempt !== options.attempt) return;
    const executedHere = channel.state === "executing";
    channel.state = !options.handedOver ? (executedHere ? "executed" : "ended") : "handedOver";
    for (const listener of channel.listeners) listener("end");
    for (const listener of this.threadListeners.get(channel.threadId) ?? []) listener(runId, "end");
    channel.listeners.clear();
    setTimeout(() => {
      if (this.runs.get(runId) === channel) this.runs.delete(runId);
    }, this.retainMs).unref();
  }

  /**
   * Subscribes to a run: first the buffered events after `afterId` (all of them for
   * -1/undefined when `replay` is set), then live ones until the run ends.
   */
  subscribe(runId: string, options: { afterId?: number; replay: boolean }, listener: Listener): () => void {
    const channel = this.runs.get(runId);
    if (!channel) {
      listener("end");
      return () => undefined;
    }
    const from = options.afterId ?? (options.replay ? 0 : Number.POSITIVE_INFINITY);
    for (const event of channel.events) if (event.id > from) listener(event);
    if (!isOpen(channel.state)) {
      listener("end");
      return () => undefined;
    }
    channel.listeners.add(listener);
    return () => channel.listeners.delete(listener);
  }

  /**
   * A run's events as an async iterable, read at the reader's pace: the buffered ones
   * after the start point, then live ones; the iteration ends when the run's stream ends.
   * The events the broker keeps are shared; those past its buffer count against the
   * reader's limit. A reader past its limit, or starting before events no longer held,
   * gets what is held, then `FellBehind`.
   */
  join(runId: string, options: JoinOptions): PullQueue<RunEvent> {
    let unsubscribe: () => void = () => undefined;
    const queue = new PullQueue<RunEvent>(options.signal, () => unsubscribe(), this.readerLimit);
    if (options.signal?.aborted) return queue;
    const channel = this.runs.get(runId);
    const from = options.afterId ?? (options.replay ? 0 : Number.POSITIVE_INFINITY);
    if (channel && from < channel.lastId && lastKept(channel) < channel.lastId) {
      for (const event of channel.events) if (event.id > from) queue.push(event);
      queue.fallBehind();
      return queue;
    }
    // Kept: in the broker's buffer, which holds a run's first events. Both the replayed
    // events and a live one just buffered are; not only the last one buffered.
    const isKept = (event: RunEvent) => channel !== undefined && event.id <= lastKept(channel);
    // The id of the last event the reader has. A followed run's channel may be behind the
    // reader's start point (its relay brings events from the first): those are repeats.
    // One after a gap (the relay went on without events the executor no longer held) is
    // not handed on as if nothing were missing: the reader is told it fell behind.
    let last = Number.isFinite(from) ? from : (channel?.lastId ?? 0);
    unsubscribe = this.subscribe(runId, options, (event) => {
      if (event === "end") return queue.close();
      if (event.id <= last) return;
      if (event.id > last + 1) return queue.fallBehind();
      last = event.id;
      queue.push(event, isKept(event) ? undefined : eventSize(event));
    });
    // Fell behind while subscribing: the queue let go before it knew how to unsubscribe.
    if (queue.fellBehind) unsubscribe();
    return queue;
  }

  /**
   * Live events of every run of a thread, until `signal` aborts or the reader falls
   * behind its limit. The stream outlives each run's buffer, so every event counts.
   */
  joinThread(threadId: string, signal: AbortSignal): PullQueue<{ runId: string; event: RunEvent }> {
    let unsubscribe: () => void = () => undefined;
    const queue = new PullQueue<{ runId: string; event: RunEvent }>(signal, () => unsubscribe(), this.readerLimit);
    if (signal.aborted) return queue;
    unsubscribe = this.subscribeThread(threadId, (runId, event) => {
      if (event !== "end") queue.push({ runId, event }, eventSize(event));
    });
    return queue;
  }

  /** Open readers of run and thread streams, for `/metrics`. */
  readerCount(): number {
    let count = 0;
    for (const channel of this.runs.values()) count += channel.listeners.size;
    for (const listeners of this.threadListeners.values()) count += listeners.size;
    return count;
  }

  /** Live events of every run of a thread, until unsubscribed. */
  subscribeThread(threadId: string, listener: (runId: string, event: RunEvent | "end") => void): () => void {
    let set = this.threadListeners.get(threadId);
    if (!set) {
      set = new Set();
      this.threadListeners.set(threadId, set);
    }
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0) this.threadListeners.delete(threadId);
    };
  }
}
