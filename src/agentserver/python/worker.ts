import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import { readFrames, writeFrame } from "./frames.ts";

/** The protocol version this server speaks (docs/python-protocol.md). */
export const PROTOCOL_VERSION = 1;

/** The worker package shipped in this repository (python/slipway_worker). */
export const WORKER_PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../../python");

export interface WorkerHello {
  protocol: number;
  worker: string;
  langgraph: string;
  python: string;
}

/** What a request does with what the worker sends while serving it. */
export interface RequestHandlers {
  onChunk?(chunk: unknown): void;
  /** Answers a callback the worker makes while serving this request (checkpoints, store). */
  onCallback?(op: string, args: Record<string, unknown>): Promise<unknown>;
}

/** A failure inside the worker: a Python exception, or the worker itself gone. */
export class PythonWorkerError extends Error {
  constructor(
    message: string,
    readonly pythonType = "PythonWorkerError",
    readonly traceback?: string,
  ) {
    super(message);
    this.name = pythonType;
  }
}

interface Pending extends RequestHandlers {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export interface PythonWorkerOptions {
  python: string;
  /** The project's directory: the worker's cwd and first import path. */
  root: string;
  env: NodeJS.ProcessEnv;
  /** Called after each (re)start, before requests go on: loads the graphs again. */
  onStart?(worker: PythonWorker): Promise<void>;
  log?(message: string): void;
  /** A worker whose loop leaves a ping unanswered this long is killed (docs/python-protocol.md). */
  pingTimeoutMs?: number;
  /** A worker whose resident memory is above this is killed. */
  memoryLimitBytes?: number;
}

const DEFAULT_PING_TIMEOUT_MS = 60_000;

/**
 * One Python worker process, supervised: started on demand, restarted after a crash
 * (its requests in flight fail, so their runs are handed back and retried), stopped
 * with the server. Requests and the worker's callbacks are multiplexed by id.
 */
export class PythonWorker {
  private child?: ChildProcess;
  private socket?: Duplex;
  private ready?: Promise<WorkerHello>;
  private readonly requests = new Map<number, Pending>();
  private nextId = 1;
  private stopped = false;
  private restarts = 0;
  private watchdog?: NodeJS.Timeout;
  /** Why this server killed the running worker, for the failure its requests get. */
  private killedFor?: string;
  hello?: WorkerHello;
  /** The worker's resident memory at its last ping. */
  residentBytes?: number;

  constructor(private readonly options: PythonWorkerOptions) {}

  /** Starts the worker if it is not running; resolves once it said hello and `onStart` ran. */
  start(): Promise<WorkerHello> {
    this.ready ??= this.launch();
    return this.ready;
  }

  private launch(): Promise<WorkerHello> {
    const { python, root, env } = this.options;
    const child = spawn(python, ["-m", "slipway_worker", root], {
      cwd: root,
      env: { ...env, PYTHONPATH: [WORKER_PACKAGE_DIR, env.PYTHONPATH].filter(Boolean).join(":"), PYTHONUNBUFFERED: "1" },
      stdio: ["ignore", "inherit", "inherit", "pipe"],
    });
    this.child = child;
    const socket = child.stdio[3] as Duplex;
    this.socket = socket;
    // A worker killed with data in flight resets the pipe; its exit is what counts, and an
    // unhandled 'error' here would take the whole server down.
    socket.on("error", (error) => {
      if (this.child === child && !this.killedFor) this.options.log?.(`python worker: its channel failed: ${error.message}`);
    });
    const hello = new Promise<WorkerHello>((resolve, reject) => {
      child.once("error", (error) => reject(new PythonWorkerError(`starting ${python} failed: ${error.message}`)));
      child.once("exit", (code, signal) => reject(new PythonWorkerError(`the Python worker exited before it was ready (${signal ?? `code ${code}`})`)));
      readFrames(
        socket,
        (message) => {
          if (message.hello) return resolve(message.hello as WorkerHello);
          this.received(message);
        },
        (error) => this.options.log?.(`python worker: ${error.message}`),
      );
    });
    child.once("exit", (code, signal) => this.exited(child, code, signal));
    return hello.then(async (said) => {
      if (said.protocol !== PROTOCOL_VERSION) {
        this.kill();
        throw new PythonWorkerError(`the Python worker speaks protocol ${said.protocol}; this server speaks ${PROTOCOL_VERSION}: reinstall slipway-worker`);
      }
      this.hello = said;
      await this.options.onStart?.(this);
      this.watch(child);
      return said;
    });
  }

  /**
   * Pings the running worker: one ping at a time, a few per timeout. An unanswered ping or
   * memory over the limit kills it, and its exit hands its runs back as a crash does.
   */
  private watch(child: ChildProcess): void {
    const timeoutMs = this.options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    const limit = this.options.memoryLimitBytes;
    let waiting = false;
    const timer = setInterval(
      () => {
        if (this.child !== child) return clearInterval(timer);
        if (waiting) return;
        waiting = true;
        const deadline = setTimeout(() => this.killFor(child, `its event loop left a ping unanswered for ${timeoutMs / 1000} s`), timeoutMs);
        this.send("ping", {})
          .then((answer) => {
            const rss = (answer as { rss_bytes?: number } | null)?.rss_bytes;
            if (typeof rss !== "number") return;
            this.residentBytes = rss;
            if (limit && rss > limit) this.killFor(child, `it used ${mb(rss)} MB of memory, over its limit of ${mb(limit)} MB`);
          })
          .catch(() => undefined)
          .finally(() => {
            clearTimeout(deadline);
            waiting = false;
          });
      },
      Math.max(100, Math.min(5_000, timeoutMs / 3)),
    );
    timer.unref();
    this.watchdog = timer;
  }

  private killFor(child: ChildProcess, reason: string): void {
    if (this.child !== child || this.killedFor) return;
    this.killedFor = reason;
    this.options.log?.(`python worker: killed, ${reason}`);
    child.kill("SIGKILL");
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.socket = undefined;
    this.ready = undefined;
    clearInterval(this.watchdog);
    const cause = this.killedFor ? `was killed: ${this.killedFor}` : `exited (${signal ?? `code ${code}`})`;
    this.killedFor = undefined;
    const failure = new PythonWorkerError(`the Python worker ${cause} while serving this request`);
    // A run in flight is handed back and retried, not failed (runs/executor.ts).
    Object.assign(failure, { executorLost: true });
    for (const pending of this.requests.values()) pending.reject(failure);
    this.requests.clear();
    if (this.stopped) return;
    // Restart in the background with a growing pause; requests meanwhile wait for it.
    const pause = Math.min(30_000, 250 * 2 ** Math.min(this.restarts++, 7));
    this.options.log?.(`python worker ${cause}; restarting in ${pause} ms`);
    const timer = setTimeout(() => {
      if (!this.stopped) this.start().catch((error) => this.options.log?.(`python worker restart failed: ${(error as Error).message}`));
    }, pause);
    timer.unref();
  }

  /** Sends a request; resolves with its answer. `signal` cancels it in the worker. */
  async request(op: string, args: Record<string, unknown>, handlers: RequestHandlers = {}, signal?: AbortSignal): Promise<unknown> {
    if (op !== "load") await this.start();
    return this.send(op, args, handlers, signal);
  }

  /** Sends without waiting for a start: for `onStart`, which runs before the worker counts as ready. */
  send(op: string, args: Record<string, unknown>, handlers: RequestHandlers = {}, signal?: AbortSignal): Promise<unknown> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new PythonWorkerError("the Python worker is not running"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => writeFrame(socket, { id: this.nextId++, op: "cancel", target: id });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.requests.set(id, {
        ...handlers,
        resolve: (value) => {
          done();
          resolve(value);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      writeFrame(socket, { id, op, ...args });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private received(message: Record<string, unknown>): void {
    if (typeof message.cb === "number") return void this.answerCallback(message);
    const pending = this.requests.get(message.id as number);
    if (!pending) return; // a cancel's own answer, or a request already failed
    if ("chunk" in message) return void pending.onChunk?.(message.chunk);
    this.requests.delete(message.id as number);
    if (message.error) {
      const error = message.error as { type: string; message: string; traceback?: string };
      pending.reject(new PythonWorkerError(error.message, error.type, error.traceback));
    } else if (message.cancelled) {
      pending.reject(new PythonWorkerError("cancelled", "CancelledError"));
    } else {
      pending.resolve(message.ok);
    }
  }

  private async answerCallback(message: Record<string, unknown>): Promise<void> {
    const socket = this.socket;
    const pending = this.requests.get(message.for as number);
    try {
      if (!pending?.onCallback) throw new Error(`no request ${String(message.for)} to answer "${String(message.op)}" for`);
      const ok = await pending.onCallback(message.op as string, message);
      if (socket) writeFrame(socket, { cb: message.cb, ok: ok ?? null });
    } catch (error) {
      if (socket) writeFrame(socket, { cb: message.cb, error: { message: (error as Error).message } });
    }
  }

  private kill(): void {
    clearInterval(this.watchdog);
    this.child?.kill("SIGKILL");
  }

  /** Stops the worker for good: closing its socket ends its loop; SIGKILL after 5 s. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.socket?.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await gone;
    clearTimeout(timer);
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}
