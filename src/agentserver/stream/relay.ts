import { randomUUID } from "node:crypto";
import type { Database } from "../../storage/database.ts";
import { streamChannel } from "../queue/channels.ts";
import type { RunCompletion } from "../queue/completion.ts";
import type { RunEvent, StreamBroker } from "./broker.ts";

/**
 * Carries run streams between agent servers that share one PostgreSQL database (two
 * replicas, or the old and new revision during a rolling update). Any process may claim
 * a run, so the process holding a client's stream is not always the one executing it.
 *
 * Over NOTIFY on one channel per schema:
 * - a process with a stream of a run it does not execute asks for it ("want"), again
 *   every second until events flow (the run may not have started anywhere yet);
 * - the executing process answers with the events it holds after the asker's last one,
 *   then forwards each new event, then "end";
 * - every follower of the run injects them into its broker with their original ids,
 *   so `Last-Event-ID` means the same everywhere, and repeats are dropped.
 * NOTIFY payloads are limited to 8000 bytes: a larger event travels in parts. A follower
 * whose executor went silent still ends: shortly after the run is recorded as ended
 * (RunCompletion), its stream is closed.
 *
 * The embedded database has one process, so the relay is only started on PostgreSQL.
 */
export class StreamRelay {
  private readonly self = randomUUID();
  readonly channel: string;
  /** Runs executing here that another process follows: stops the forwarding. */
  private readonly forwarding = new Map<string, () => void>();
  /** Runs asked for that were not executing here: forwarded if they start here soon. */
  private readonly wanted = new Map<string, number>();
  /** Runs this process follows: how many streams, and the timer re-asking for them. */
  private readonly following = new Map<string, { streams: number; timer: NodeJS.Timeout; heard: boolean; stop: AbortController }>();
  /** Parts of large events, by "<run>:<event id>". */
  private readonly parts = new Map<string, string[]>();
  private outbox: string[] = [];
  private sending = false;
  private unlisten?: () => Promise<void>;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly broker: StreamBroker,
    private readonly completion: Pick<RunCompletion, "wait">,
    private readonly options: { askEveryMs?: number; endGraceMs?: number; wantTtlMs?: number } = {},
  ) {
    this.channel = streamChannel(db.schema);
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(this.channel, (payload) => this.receive(payload));
    this.broker.onExecute((runId) => {
      const until = this.wanted.get(runId);
      this.wanted.delete(runId);
      if (until !== undefined && until > Date.now()) this.forward(runId, 0);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of this.forwarding.values()) stop();
    this.forwarding.clear();
    for (const runId of [...this.following.keys()]) this.unfollow(runId);
    await this.unlisten?.();
  }

  /**
   * A stream here wants a run that is not executing here. Returns the function to call
   * when that stream closes.
   */
  follow(runId: string): () => void {
    let entry = this.following.get(runId);
    if (!entry) {
      const timer = setInterval(() => this.askAgain(runId), this.options.askEveryMs ?? 1_000);
      timer.unref();
      const stop = new AbortController();
      entry = { streams: 0, timer, heard: false, stop };
      this.following.set(runId, entry);
      this.ask(runId);
      void this.completion.wait(runId, stop.signal).then(() => {
        if (stop.signal.aborted) return;
        // The executor's "end" normally comes first; this only ends a follower whose
        // executor stopped talking (crashed, or lost its notification connection).
        setTimeout(() => this.broker.isFollowing(runId) && this.broker.end(runId), this.options.endGraceMs ?? 2_000).unref();
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

  private unfollow(runId: string): void {
    const entry = this.following.get(runId);
    if (!entry) return;
    clearInterval(entry.timer);
    entry.stop.abort();
    this.following.delete(runId);
  }

  private askAgain(runId: string): void {
    const entry = this.following.get(runId);
    if (!entry) return;
    // Ended, or it executes here now: nothing more to ask.
    if (!this.broker.isFollowing(runId)) return;
    if (!entry.heard) this.ask(runId);
  }

  private ask(runId: string): void {
    this.send({ k: "w", s: this.self, r: runId, a: this.broker.lastId(runId) });
  }

  /** Sends the run's events after `afterId`, then (once) every new one until it ends. */
  private forward(runId: string, afterId: number): void {
    if (this.forwarding.has(runId)) {
      for (const event of this.broker.eventsAfter(runId, afterId)) this.sendEvent(runId, event);
      return;
    }
    const stop = this.broker.subscribe(runId, { afterId, replay: true }, (event) => {
      if (event === "end") {
        this.send({ k: "x", s: this.self, r: runId });
        this.forwarding.delete(runId);
      } else this.sendEvent(runId, event);
    });
    if (this.broker.isExecuting(runId)) this.forwarding.set(runId, stop);
  }

  private sendEvent(runId: string, event: RunEvent): void {
    const whole = JSON.stringify({ k: "e", s: this.self, r: runId, i: event.id, e: event.event, d: event.data });
    if (whole.length <= PART_CHARS) return this.send(whole);
    const body = JSON.stringify({ e: event.event, d: event.data });
    const pieces = splitText(body, PART_CHARS);
    pieces.forEach((piece, index) => this.send({ k: "p", s: this.self, r: runId, i: event.id, n: pieces.length, j: index, t: piece }));
  }

  private receive(payload: string): void {
    let message: Message;
    try {
      message = JSON.parse(payload) as Message;
    } catch {
      return;
    }
    if (message.s === this.self) return;
    const runId = message.r;
    if (message.k === "w") {
      // Executed here and ended already: its held events and "end" still go out.
      if (this.broker.executedHere(runId)) this.forward(runId, message.a);
      else {
        // Perhaps queued, and this process will claim it: remember the ask for a while.
        this.wanted.set(runId, Date.now() + (this.options.wantTtlMs ?? 60_000));
        this.pruneWanted();
      }
      return;
    }
    if (!this.broker.isFollowing(runId)) return;
    const entry = this.following.get(runId);
    if (entry) entry.heard = true;
    if (message.k === "x") this.broker.end(runId);
    else if (message.k === "e") this.broker.inject(runId, { id: message.i, event: message.e, data: message.d });
    else if (message.k === "p") this.receivePart(runId, message);
  }

  private receivePart(runId: string, message: PartMessage): void {
    const key = `${runId}:${message.i}`;
    const pieces = message.j === 0 ? [] : this.parts.get(key);
    // Parts of one event arrive in order (one sender, one channel); a gap drops the event.
    if (!pieces || pieces.length !== message.j) return void this.parts.delete(key);
    pieces.push(message.t);
    if (pieces.length < message.n) return void this.parts.set(key, pieces);
    this.parts.delete(key);
    const { e, d } = JSON.parse(pieces.join("")) as { e: string; d: unknown };
    this.broker.inject(runId, { id: message.i, event: e, data: d });
  }

  private pruneWanted(): void {
    if (this.wanted.size < 1_000) return;
    const now = Date.now();
    for (const [runId, until] of this.wanted) if (until <= now) this.wanted.delete(runId);
  }

  /** Queues a message; messages go out in order, those queued meanwhile in one statement. */
  private send(message: Message | string): void {
    if (this.closed) return;
    this.outbox.push(typeof message === "string" ? message : JSON.stringify(message));
    if (!this.sending) void this.flush();
  }

  private async flush(): Promise<void> {
    this.sending = true;
    try {
      while (this.outbox.length && !this.closed) {
        const batch = this.outbox.splice(0, 100);
        const calls = batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(", ");
        await this.db.query(`SELECT ${calls}`, [this.channel, ...batch]).catch(() => undefined);
      }
    } finally {
      this.sending = false;
    }
  }
}

/** Characters per NOTIFY payload: at most 3 bytes each in UTF-8, well under the 8000-byte limit. */
const PART_CHARS = 2_400;

type Message =
  | { k: "w"; s: string; r: string; a: number }
  | { k: "e"; s: string; r: string; i: number; e: string; d: unknown }
  | PartMessage
  | { k: "x"; s: string; r: string };

interface PartMessage {
  k: "p";
  s: string;
  r: string;
  i: number;
  /** Number of parts, and this part's index. */
  n: number;
  j: number;
  t: string;
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
