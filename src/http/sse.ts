import { withExposed } from "./expose-headers.ts";
import type { FastifyReply, FastifyRequest } from "fastify";

export interface SseOptions {
  /** Extra headers: Content-Location naming the run, Location for reconnects. */
  headers?: Record<string, string>;
  heartbeatMs?: number;
}

/** The streams open on each HTTP server, so that shutdown can end them (`endOpenStreams`). */
const openStreams = new WeakMap<object, Set<SseWriter>>();

/**
 * Ends every stream still open on `server` normally (no on_disconnect). At shutdown these
 * are the streams that cannot end here any more: a thread stream, and a stream of a run
 * executing in another process; the client joins again where the run goes on.
 */
export function endOpenStreams(server: object): void {
  for (const stream of [...(openStreams.get(server) ?? [])]) stream.end();
}

/**
 * Server-sent events on a hijacked reply. Frames are `event:`, `data:` (JSON) and
 * `id:` lines; heartbeat comment lines keep proxies and the SDK's idle watchdog happy.
 *
 * `send` waits while the socket is backed up (backpressure): a client that reads slowly
 * holds at most the socket's buffer plus one frame here, and the reader of the run's
 * events (broker.join) waits with it instead of the server buffering the run's output.
 */
export class SseWriter {
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closeHandlers: Array<() => void> = [];
  private readonly over = new AbortController();
  /** Aborted when the stream is over (ended here or closed by the client): stops its readers. */
  readonly signal = this.over.signal;
  private markFinished!: () => void;
  /** Settles when the stream is over: ended here (`end`) or closed by the client. */
  readonly finished = new Promise<void>((resolve) => (this.markFinished = resolve));

  private readonly registry: Set<SseWriter>;

  constructor(
    request: FastifyRequest,
    private readonly reply: FastifyReply,
    options: SseOptions = {},
  ) {
    reply.hijack();
    // Keyed by the Node server, which every encapsulated Fastify context shares.
    const server = request.server.server;
    this.registry = openStreams.get(server) ?? new Set();
    openStreams.set(server, this.registry);
    this.registry.add(this);
    const raw = reply.raw;
    // Headers hooks set on the reply (rate limits, CORS and its expose list) go into
    // our head too, with the stream's own location headers exposed as well.
    const fromHooks = reply.getHeaders();
    const exposed = withExposed(fromHooks["access-control-expose-headers"], ["Content-Location", "Location"]);
    // Lower-case names throughout: the reply's header names are, and one name must not
    // appear twice in the head.
    const own: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) own[name.toLowerCase()] = value;
    raw.writeHead(200, {
      ...(fromHooks as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "access-control-expose-headers": exposed,
      ...own,
    });
    raw.flushHeaders?.();
    this.heartbeat = setInterval(() => this.comment("heartbeat"), options.heartbeatMs ?? 10_000);
    this.heartbeat.unref();
    // The response closed before we ended it: the client went away (on_disconnect).
    // (The request's own "close" fires as soon as its body is read, so it is no signal.)
    raw.on("close", () => this.markClosed());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  /** Writes one event; resolves once the socket can take more (at once when it can). */
  async send(event: string, data: unknown, id?: number | string): Promise<void> {
    if (this.closed) return;
    let frame = `event: ${event}\ndata: ${JSON.stringify(data ?? null)}\n`;
    if (id !== undefined) frame += `id: ${id}\n`;
    if (!this.reply.raw.write(`${frame}\n`)) await this.drained();
  }

  /** A heartbeat; skipped while the socket is backed up (the client is busy reading anyway). */
  comment(text: string): void {
    if (!this.closed && !this.reply.raw.writableNeedDrain) this.reply.raw.write(`: ${text}\n\n`);
  }

  private drained(): Promise<void> {
    const raw = this.reply.raw;
    return new Promise((resolve) => {
      const done = () => {
        raw.off("drain", done);
        this.signal.removeEventListener("abort", done);
        resolve();
      };
      raw.on("drain", done);
      this.signal.addEventListener("abort", done);
      if (this.closed) done();
    });
  }

  /** Ends the response normally. */
  end(): void {
    if (this.closed) return;
    clearInterval(this.heartbeat);
    this.closed = true;
    this.registry.delete(this);
    // A normal end is not a disconnect: on_disconnect handlers must not fire.
    this.closeHandlers.length = 0;
    this.reply.raw.end();
    this.over.abort();
    this.markFinished();
  }

  private markClosed(): void {
    if (!this.closed) {
      clearInterval(this.heartbeat);
      this.closed = true;
      this.registry.delete(this);
      const handlers = this.closeHandlers.splice(0);
      for (const handler of handlers) handler();
    }
    this.over.abort();
    this.markFinished();
  }
}
