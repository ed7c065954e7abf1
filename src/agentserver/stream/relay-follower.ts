import type { StreamBroker } from "./broker.ts";
import type { RunEvent } from "./run-streams.ts";
import { joinParts, type EndMessage, type EventMessage, type HereMessage, type PartMessage, type RelayMessage } from "./relay-protocol.ts";
import type { RelayOptions, RunEndings } from "./relay.ts";

/** Events a follower holds after a gap at most; later ones are asked for again. */
const MAX_HELD_EVENTS = 10_000;

interface Followed {
  /** Streams of this process on the run. */
  streams: number;
  timer: NodeJS.Timeout;
  /** Heard the executor since the last ask: no need to ask again (unless a gap opens). */
  heard: boolean;
  /** When the last message about the run came, from any process. */
  lastHeardAt: number;
  /** Events that came after a gap, by local id, waiting for the missing ones. */
  held: Map<number, RunEvent>;
  gapSince?: number;
  /** Aborted when the run is no longer followed: stops waiting for its end. */
  stop: AbortController;
}

/**
 * The follower's side of the relay: runs that streams of this process want while they
 * execute in another process. It asks for their events, injects them into the broker
 * in order (holding those after a gap until the missing ones come), and ends a stream
 * whose executor went silent once the run is recorded as ended.
 */
export class RelayFollowers {
  private readonly following = new Map<string, Followed>();
  /** Parts of large events, by "<run>:<sender>:<attempt>:<event id>". */
  private readonly parts = new Map<string, string[]>();

  constructor(
    private readonly self: string,
    private readonly broker: StreamBroker,
    private readonly endings: RunEndings,
    private readonly send: (message: RelayMessage) => void,
    private readonly options: RelayOptions,
  ) {}

  has(runId: string): boolean {
    return this.following.has(runId);
  }

  /** A stream here wants the run. Returns the function to call when that stream closes. */
  follow(runId: string): () => void {
    let entry = this.following.get(runId);
    if (!entry) {
      const timer = setInterval(() => this.tick(runId), this.options.askEveryMs ?? 1_000);
      timer.unref();
      const stop = new AbortController();
      const created: Followed = { streams: 0, timer, heard: false, lastHeardAt: Date.now(), held: new Map(), stop };
      entry = created;
      this.following.set(runId, created);
      this.ask(runId);
      void this.endings.wait(runId, stop.signal).then(() => {
        if (!stop.signal.aborted) this.endWhenQuiet(runId);
      });
    }
    entry.streams++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const current = this.following.get(runId);
      if (current && --current.streams === 0) this.unfollow(runId);
    };
  }

  /** The run is known to have ended (its record says so), though its end was not heard here. */
  ended(runId: string): void {
    if (this.following.has(runId)) this.endWhenQuiet(runId);
    else this.broker.end(runId);
  }

  /** After a reconnect (notifications meanwhile are gone): ask again from the last event held. */
  askAgain(): void {
    for (const [runId, entry] of this.following) {
      entry.heard = false;
      this.ask(runId);
    }
  }

  unfollowAll(): void {
    for (const runId of [...this.following.keys()]) this.unfollow(runId);
  }

  /** An executor's message about a run followed here. */
  receive(message: EventMessage | PartMessage | EndMessage | HereMessage): void {
    const runId = message.r;
    const entry = this.following.get(runId);
    if (!entry || this.broker.stateOf(runId) !== "following") return;
    entry.lastHeardAt = Date.now();
    const { attempt } = this.broker.attemptOf(runId);
    // A process that ran an earlier attempt may still answer asks: the later attempt wins.
    if (message.t < attempt) return;
    if (message.t > attempt) {
      this.broker.followAttempt(runId, message.t);
      entry.held.clear();
      entry.gapSince = undefined;
    }
    if (message.k === "x") {
      if (message.f) this.endFollowed(runId, entry);
      // Back in the queue: the next attempt's process answers the asks.
      else entry.heard = false;
      return;
    }
    entry.heard = true;
    if (message.k === "h") return;
    if (message.k === "e") this.accept(runId, entry, { id: message.i, event: message.e, data: message.d });
    else this.receivePart(runId, entry, message);
  }

  private unfollow(runId: string): void {
    const entry = this.following.get(runId);
    if (!entry) return;
    clearInterval(entry.timer);
    entry.stop.abort();
    this.following.delete(runId);
    for (const key of this.parts.keys()) if (key.startsWith(`${runId}:`)) this.parts.delete(key);
  }

  /**
   * The run is recorded as ended. The executor's "end" normally comes first; this ends
   * a follower whose executor stopped talking (crashed, or lost its connection), once
   * nothing was heard of the run for `endGraceMs`: a tail still in flight gets through.
   */
  private endWhenQuiet(runId: string): void {
    const grace = this.options.endGraceMs ?? 2_000;
    const check = () => {
      const entry = this.following.get(runId);
      if (!entry || this.broker.stateOf(runId) !== "following") return;
      const quietFor = Date.now() - entry.lastHeardAt;
      if (quietFor < grace) setTimeout(check, grace - quietFor).unref();
      else this.endFollowed(runId, entry);
    };
    setTimeout(check, grace).unref();
  }

  private endFollowed(runId: string, entry: Followed): void {
    this.injectHeld(runId, entry, true);
    this.broker.end(runId);
  }

  /**
   * Every `askEveryMs`: ask until the executor answers, again while a gap stays open, and
   * again after a silence (the executor may be gone, the run retried elsewhere).
   */
  private tick(runId: string): void {
    const entry = this.following.get(runId);
    // Ended, or it executes here now: nothing more to ask.
    if (!entry || this.broker.stateOf(runId) !== "following") return;
    if (entry.heard && Date.now() - entry.lastHeardAt >= (this.options.silenceMs ?? 10_000)) entry.heard = false;
    if (!entry.heard) return void this.ask(runId);
    if (entry.gapSince === undefined) return;
    // The executor no longer holds the missing events (it keeps a bounded number): go on without them.
    if (Date.now() - entry.gapSince >= (this.options.gapPatienceMs ?? 5_000)) this.injectHeld(runId, entry, true);
    else this.ask(runId);
  }

  private ask(runId: string): void {
    const { attempt, start } = this.broker.attemptOf(runId);
    this.send({ k: "w", s: this.self, r: runId, t: attempt, a: this.broker.lastId(runId) - start });
  }

  /** An event with its id within the attempt: injected in order, or held after a gap. */
  private accept(runId: string, entry: Followed, event: RunEvent): void {
    const id = this.broker.attemptOf(runId).start + event.id;
    const last = this.broker.lastId(runId);
    if (id <= last) return;
    if (id > last + 1) {
      if (entry.held.size < MAX_HELD_EVENTS) entry.held.set(id, { ...event, id });
      if (entry.gapSince === undefined) {
        entry.gapSince = Date.now();
        this.ask(runId);
      }
      return;
    }
    this.broker.inject(runId, { ...event, id });
    this.injectHeld(runId, entry, false);
  }

  /** Injects the held events that follow on; with `all`, every one, over the gaps. */
  private injectHeld(runId: string, entry: Followed, all: boolean): void {
    if (!entry.held.size) return;
    const ids = [...entry.held.keys()].sort((a, b) => a - b);
    for (const id of ids) {
      if (!all && id > this.broker.lastId(runId) + 1) break;
      this.broker.inject(runId, entry.held.get(id)!);
      entry.held.delete(id);
    }
    if (!entry.held.size) entry.gapSince = undefined;
  }

  private receivePart(runId: string, entry: Followed, message: PartMessage): void {
    const key = `${runId}:${message.s}:${message.t}:${message.i}`;
    const pieces = message.j === 0 ? [] : this.parts.get(key);
    // Parts of one event arrive in order (one sender, one channel); a gap drops the event
    // (and the follower asks again for it when the next one comes).
    if (!pieces || pieces.length !== message.j) return void this.parts.delete(key);
    pieces.push(message.c);
    if (pieces.length < message.n) return void this.parts.set(key, pieces);
    this.parts.delete(key);
    const { event, data } = joinParts(pieces);
    this.accept(runId, entry, { id: message.i, event, data });
  }
}
