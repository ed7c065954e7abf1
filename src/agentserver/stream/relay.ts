import { randomUUID } from "node:crypto";
import type { Database } from "../../storage/database.ts";
import type { RunEvent, StreamBroker } from "./broker.ts";

/** What the relay needs to know of runs' ends (runs/completion.ts provides it). */
export interface RunEndings {
  /** Resolves when the run is recorded as ended (or `signal` aborts). */
  wait(runId: string, signal?: AbortSignal): Promise<unknown>;
  /** Called with every run announced as ended, in any process. */
  onEnded(listener: (runId: string) => void): void;
}

/**
 * Carries run streams between agent servers that share one PostgreSQL database (two
 * replicas, or the old and new revision during a rolling update). Any process may claim
 * a run, so the process holding a client's stream is not always the one executing it.
 *
 * Over NOTIFY on one channel per schema:
 * - a process with a stream of a run it does not execute asks for it ("want", with the
 *   attempt and the last event it holds), again every second until events flow (the run
 *   may not have started anywhere yet);
 * - the executing process answers with the events it holds after that one, then
 *   forwards each new event, then "end" (saying whether the run ended or only went back
 *   to the queue, to go on in another process);
 * - every follower of the run injects them into its broker in order: an event after a
 *   gap waits until the missing ones come (it asks again for them), so a stream never
 *   skips events it could still get.
 * Event ids are counted per attempt on the wire; a follower numbers a later attempt's
 * events after those it holds, so a stream goes on across a retry in another process.
 * A follower that has heard nothing for `silenceMs` asks again: the executor answers
 * "here" when it has nothing new, and when it answers nothing (it crashed) the asks go
 * on until the process that runs the next attempt answers them.
 * NOTIFY payloads are limited to 8000 bytes: a larger event travels in parts. A follower
 * whose executor went silent still ends: once the run is recorded as ended
 * (RunCompletion) and nothing more was heard for a moment, its stream is closed.
 *
 * The embedded database has one process, so the relay is only started on PostgreSQL.
 */
export class StreamRelay {
  private readonly self = randomUUID();
  /** Runs executing here that another process follows: stops the forwarding. */
  private readonly forwarding = new Map<string, () => void>();
  /** Runs asked for that were not executing here: forwarded if they start here soon. */
  private readonly wanted = new Map<string, number>();
  /** Runs this process follows, for the streams it holds. */
  private readonly following = new Map<string, Followed>();
  /** Parts of large events, by "<run>:<sender>:<attempt>:<event id>". */
  private readonly parts = new Map<string, string[]>();
  private outbox: string[] = [];
  /** Messages queued and messages gone out (or given up on) so far, for `sent`. */
  private queuedCount = 0;
  private doneCount = 0;
  private readonly sentWaiters: Array<{ upTo: number; resolve: () => void }> = [];
  private sending = false;
  private flushing: Promise<void> = Promise.resolve();
  private unlisten?: () => Promise<void>;
  private closed = false;

  /** `channel`: the NOTIFY channel of this database's streams (runs/announcements.ts `streamChannel`). */
  constructor(
    private readonly db: Database,
    readonly channel: string,
    private readonly broker: StreamBroker,
    private readonly completion: RunEndings,
    private readonly options: RelayOptions = {},
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(this.channel, (payload) => this.receive(payload));
    this.broker.onExecute((runId) => {
      const until = this.wanted.get(runId);
      this.wanted.delete(runId);
      if (until !== undefined && until > Date.now()) this.forward(runId, this.broker.attemptOf(runId).start);
    });
    // Notifications sent while the connection was down are gone: ask again from the last event held.
    this.db.onReconnect(() => {
      for (const [runId, entry] of this.following) {
        entry.heard = false;
        this.ask(runId);
      }
    });
    // A run created here that ended in another process with no stream here: forget it.
    this.completion.onEnded((runId) => {
      if (!this.following.has(runId)) this.broker.dropFollowed(runId);
    });
  }

  async close(): Promise<void> {
    for (const stop of this.forwarding.values()) stop();
    this.forwarding.clear();
    for (const runId of [...this.following.keys()]) this.unfollow(runId);
    // What is queued (the "end" of runs handed back at shutdown) still goes out.
    while (this.sending) await this.flushing;
    this.closed = true;
    await this.unlisten?.();
  }

  /**
   * A stream here wants a run that is not executing here. Returns the function to call
   * when that stream closes.
   */
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
      void this.completion.wait(runId, stop.signal).then(() => {
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
      if (!entry || !this.broker.isFollowing(runId)) return;
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
    if (!entry || !this.broker.isFollowing(runId)) return;
    if (entry.heard && Date.now() - entry.lastHeardAt >= (this.options.silenceMs ?? 10_000)) entry.heard = false;
    if (!entry.heard) return this.ask(runId);
    if (entry.gapSince === undefined) return;
    // The executor no longer holds the missing events (it keeps a bounded number): go on without them.
    if (Date.now() - entry.gapSince >= (this.options.gapPatienceMs ?? 5_000)) this.injectHeld(runId, entry, true);
    else this.ask(runId);
  }

  private ask(runId: string): void {
    const { attempt, start } = this.broker.attemptOf(runId);
    this.send({ k: "w", s: this.self, r: runId, t: attempt, a: this.broker.lastId(runId) - start });
  }

  /** Sends the run's events after `afterId`, then (once) every new one until it ends. */
  private forward(runId: string, afterId: number): void {
    if (this.forwarding.has(runId)) {
      for (const event of this.broker.eventsAfter(runId, afterId)) this.sendEvent(runId, event);
      return;
    }
    const stop = this.broker.subscribe(runId, { afterId, replay: true }, (event) => {
      if (event === "end") {
        this.forwarding.delete(runId);
        const { attempt } = this.broker.attemptOf(runId);
        this.send({ k: "x", s: this.self, r: runId, t: attempt, f: this.broker.endedForGood(runId) });
      } else this.sendEvent(runId, event);
    });
    if (this.broker.isExecuting(runId)) this.forwarding.set(runId, stop);
  }

  /** Sends one event of the current attempt, with its id counted from the attempt's start. */
  private sendEvent(runId: string, event: RunEvent): void {
    const { attempt, start } = this.broker.attemptOf(runId);
    if (event.id <= start) return;
    const id = event.id - start;
    const whole = JSON.stringify({ k: "e", s: this.self, r: runId, t: attempt, i: id, e: event.event, d: event.data });
    if (whole.length <= PART_CHARS) return this.send(whole);
    const body = JSON.stringify({ e: event.event, d: event.data });
    const pieces = splitText(body, PART_CHARS);
    pieces.forEach((piece, index) => this.send({ k: "p", s: this.self, r: runId, t: attempt, i: id, n: pieces.length, j: index, c: piece }));
  }

  private receive(payload: string): void {
    let message: Message;
    try {
      message = JSON.parse(payload) as Message;
    } catch {
      return;
    }
    if (typeof message !== "object" || message === null || typeof message.r !== "string") return;
    if (message.s === this.self) return;
    const runId = message.r;
    if (message.k === "w") return this.answer(runId, message);

    const entry = this.following.get(runId);
    if (!entry || !this.broker.isFollowing(runId)) return;
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

  /** Another process asks for a run: answer if it executes (or executed) here, or may soon. */
  private answer(runId: string, want: WantMessage): void {
    if (this.broker.executedHere(runId)) {
      const { attempt, start } = this.broker.attemptOf(runId);
      // The asker follows a later attempt than this process ran.
      if (attempt < want.t) return;
      const after = start + (attempt === want.t ? Math.max(0, want.a) : 0);
      this.forward(runId, after);
      // Nothing new to send: say it still executes here, so the asker stops asking.
      if (this.broker.isExecuting(runId) && this.broker.lastId(runId) <= after) this.send({ k: "h", s: this.self, r: runId, t: attempt });
      return;
    }
    // Perhaps queued, and this process will claim it: remember the ask for a while.
    this.wanted.set(runId, Date.now() + (this.options.wantTtlMs ?? 60_000));
    this.pruneWanted();
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
    const { e, d } = JSON.parse(pieces.join("")) as { e: string; d: unknown };
    this.accept(runId, entry, { id: message.i, event: e, data: d });
  }

  private pruneWanted(): void {
    if (this.wanted.size < 1_000) return;
    const now = Date.now();
    for (const [runId, until] of this.wanted) if (until <= now) this.wanted.delete(runId);
  }

  /**
   * Resolves once every message queued so far went out, or after `withinMs` (a stuck
   * statement must not hold up the end of every run; followers then end by the quiet
   * rule). The end of a run is announced after this, so that followers get its last
   * events before they hear it ended.
   */
  sent(withinMs = 2_000): Promise<void> {
    if (this.doneCount >= this.queuedCount) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { upTo: this.queuedCount, resolve };
      this.sentWaiters.push(waiter);
      setTimeout(() => {
        const index = this.sentWaiters.indexOf(waiter);
        if (index >= 0) this.sentWaiters.splice(index, 1);
        resolve();
      }, withinMs).unref();
    });
  }

  private settleSent(): void {
    const all = this.closed || !this.sending;
    for (let i = this.sentWaiters.length - 1; i >= 0; i--) {
      const waiter = this.sentWaiters[i]!;
      if (all || waiter.upTo <= this.doneCount) {
        this.sentWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  /** Queues a message; messages go out in order, those queued meanwhile in one statement. */
  private send(message: Message | string): void {
    if (this.closed) return;
    this.queuedCount++;
    this.outbox.push(typeof message === "string" ? message : JSON.stringify(message));
    if (this.sending) return;
    this.sending = true;
    this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    try {
      while (this.outbox.length && !this.closed) {
        const batch = this.outbox.splice(0, 100);
        const calls = batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(", ");
        const statement = () => this.db.query(`SELECT ${calls}`, [this.channel, ...batch]);
        // One more try for a dropped connection; followers ask again for what is lost.
        await statement().catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await statement().catch((error) => this.options.log?.warn({ err: error, messages: batch.length }, "stream relay notifications lost"));
        });
        this.doneCount += batch.length;
        this.settleSent();
      }
    } catch {
      // Only a failing logger gets here; what was not sent is asked for again.
    } finally {
      this.sending = false;
      this.doneCount = this.queuedCount - this.outbox.length;
      this.settleSent();
    }
  }
}

export interface RelayOptions {
  askEveryMs?: number;
  /** After the run is recorded as ended, how long a silent executor's followers wait. */
  endGraceMs?: number;
  wantTtlMs?: number;
  /** How long a follower that heard the executor waits in silence before asking again. */
  silenceMs?: number;
  /** How long a follower waits for events missing before those it holds. */
  gapPatienceMs?: number;
  log?: { warn(obj: unknown, msg: string): void };
}

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

/** Events a follower holds after a gap at most; later ones are asked for again. */
const MAX_HELD_EVENTS = 10_000;

/** Characters per NOTIFY payload: at most 3 bytes each in UTF-8, well under the 8000-byte limit. */
const PART_CHARS = 2_400;

/** `t` is the attempt the message is about; ids (`a`, `i`) count within it. */
type Message = WantMessage | EventMessage | PartMessage | EndMessage | HereMessage;

interface WantMessage {
  k: "w";
  s: string;
  r: string;
  t: number;
  /** The last event the asker holds (0: none). */
  a: number;
}

interface EventMessage {
  k: "e";
  s: string;
  r: string;
  t: number;
  i: number;
  e: string;
  d: unknown;
}

interface EndMessage {
  k: "x";
  s: string;
  r: string;
  t: number;
  /** The run ended; false: it went back to the queue and goes on elsewhere. */
  f: boolean;
}

/** Answer to an ask when the run executes here and there is nothing new to send. */
interface HereMessage {
  k: "h";
  s: string;
  r: string;
  t: number;
}

interface PartMessage {
  k: "p";
  s: string;
  r: string;
  t: number;
  i: number;
  /** Number of parts, this part's index, and its text. */
  n: number;
  j: number;
  c: string;
}

/** Cuts text into pieces of at most `size` UTF-16 units, never inside a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
