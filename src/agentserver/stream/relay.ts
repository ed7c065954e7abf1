import { randomUUID } from "node:crypto";
import type { Database } from "../../storage/database.ts";
import { isOver, type StreamBroker } from "./broker.ts";
import type { RunEvent } from "./run-streams.ts";
import { NotifyOutbox } from "./notify-outbox.ts";
import { RelayFollowers } from "./relay-follower.ts";
import { eventPayloads, readRelayMessage, type RelayMessage, type WantMessage } from "./relay-protocol.ts";

/** What the relay needs to know of runs' ends (runs/completion.ts provides it). */
export interface RunEndings {
  /** Resolves when the run is recorded as ended (or `signal` aborts). */
  wait(runId: string, signal?: AbortSignal): Promise<unknown>;
  /** Called with every run announced as ended, in any process. */
  onEnded(listener: (runId: string) => void): void;
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

/**
 * Carries run streams between agent servers that share one PostgreSQL database (two
 * replicas, or the old and new revision during a rolling update). Any process may claim
 * a run, so the process holding a client's stream is not always the one executing it.
 *
 * Over NOTIFY on one channel per schema (messages: relay-protocol.ts; sending:
 * notify-outbox.ts):
 * - a process with a stream of a run it does not execute asks for it ("want", with the
 *   attempt and the last event it holds), again every second until events flow (the run
 *   may not have started anywhere yet): relay-follower.ts;
 * - the executing process answers with the events it holds after that one, then
 *   forwards each new event, then "end" (saying whether the run ended or only went back
 *   to the queue, to go on in another process): this file;
 * - every follower of the run injects them into its broker in order: an event after a
 *   gap waits until the missing ones come (it asks again for them), so a stream never
 *   skips events it could still get.
 * Event ids are counted per attempt on the wire; a follower numbers a later attempt's
 * events after those it holds, so a stream goes on across a retry in another process.
 * A follower that has heard nothing for `silenceMs` asks again: the executor answers
 * "here" when it has nothing new, and when it answers nothing (it crashed) the asks go
 * on until the process that runs the next attempt answers them. A follower whose
 * executor went silent still ends: once the run is recorded as ended and nothing more
 * was heard for a moment, its stream is closed.
 *
 * The embedded database has one process, so the relay is only started on PostgreSQL.
 */
export class StreamRelay {
  private readonly self = randomUUID();
  /** Runs executing here that another process follows: stops the forwarding. */
  private readonly forwarding = new Map<string, () => void>();
  /** Runs asked for that were not executing here: forwarded if they start here soon. */
  private readonly wanted = new Map<string, number>();
  private readonly outbox: NotifyOutbox;
  private readonly followers: RelayFollowers;
  private unlisten?: () => Promise<void>;

  /** `channel`: the NOTIFY channel of this database's streams (runs/announcements.ts `streamChannel`). */
  constructor(
    private readonly db: Database,
    readonly channel: string,
    private readonly broker: StreamBroker,
    private readonly completion: RunEndings,
    private readonly options: RelayOptions = {},
  ) {
    this.outbox = new NotifyOutbox(db, channel, options.log);
    this.followers = new RelayFollowers(this.self, broker, completion, (message) => this.send(message), options);
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(this.channel, (payload) => this.receive(payload));
    this.broker.onExecute((runId) => {
      const until = this.wanted.get(runId);
      this.wanted.delete(runId);
      if (until !== undefined && until > Date.now()) this.forward(runId, this.broker.attemptOf(runId).start);
    });
    // Notifications sent while the connection was down are gone: ask again from the last event held.
    this.db.onReconnect(() => this.followers.askAgain());
    // A run created here that ended in another process with no stream here: forget it.
    this.completion.onEnded((runId) => {
      if (!this.followers.has(runId)) this.broker.dropFollowed(runId);
    });
  }

  async close(): Promise<void> {
    for (const stop of this.forwarding.values()) stop();
    this.forwarding.clear();
    this.followers.unfollowAll();
    // What is queued (the "end" of runs handed back at shutdown) still goes out.
    await this.outbox.close();
    await this.unlisten?.();
  }

  /**
   * A stream here wants a run that is not executing here. Returns the function to call
   * when that stream closes.
   */
  follow(runId: string): () => void {
    return this.followers.follow(runId);
  }

  /** The run is known to have ended (its record says so), though its end was not heard here. */
  ended(runId: string): void {
    this.followers.ended(runId);
  }

  /**
   * Resolves once every message queued so far went out, or after `withinMs`. The end of
   * a run is announced after this, so that followers get its last events before they
   * hear it ended.
   */
  sent(withinMs = 2_000): Promise<void> {
    return this.outbox.sent(withinMs);
  }

  private send(message: RelayMessage): void {
    this.outbox.send(JSON.stringify(message));
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
        this.send({ k: "x", s: this.self, r: runId, t: attempt, f: isOver(this.broker.stateOf(runId)) });
      } else this.sendEvent(runId, event);
    });
    if (this.broker.stateOf(runId) === "executing") this.forwarding.set(runId, stop);
  }

  /** Sends one event of the current attempt, with its id counted from the attempt's start. */
  private sendEvent(runId: string, event: RunEvent): void {
    const { attempt, start } = this.broker.attemptOf(runId);
    if (event.id <= start) return;
    for (const payload of eventPayloads(this.self, runId, attempt, event.id - start, event.event, event.data)) this.outbox.send(payload);
  }

  private receive(payload: string): void {
    const message = readRelayMessage(payload);
    if (!message || message.s === this.self) return;
    if (message.k === "w") this.answer(message.r, message);
    else this.followers.receive(message);
  }

  /** Another process asks for a run: answer if it executes (or executed) here, or may soon. */
  private answer(runId: string, want: WantMessage): void {
    const state = this.broker.stateOf(runId);
    if (state === "executing" || state === "executed" || state === "handedOver") {
      const { attempt, start } = this.broker.attemptOf(runId);
      // The asker follows a later attempt than this process ran.
      if (attempt < want.t) return;
      const after = start + (attempt === want.t ? Math.max(0, want.a) : 0);
      this.forward(runId, after);
      // Nothing new to send: say it still executes here, so the asker stops asking.
      if (state === "executing" && this.broker.lastId(runId) <= after) this.send({ k: "h", s: this.self, r: runId, t: attempt });
      return;
    }
    // Perhaps queued, and this process will claim it: remember the ask for a while.
    this.wanted.set(runId, Date.now() + (this.options.wantTtlMs ?? 60_000));
    this.pruneWanted();
  }

  private pruneWanted(): void {
    if (this.wanted.size < 1_000) return;
    const now = Date.now();
    for (const [runId, until] of this.wanted) if (until <= now) this.wanted.delete(runId);
  }
}
