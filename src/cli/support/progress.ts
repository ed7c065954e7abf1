import type { LogEntry, LogType } from "../../client/index.ts";
import type { Revision } from "../../controlplane/revisions/schemas.ts";
import { formatElapsed, note, oneLine, printJsonLine } from "./output.ts";

/**
 * How `deploy` and the waits show progress, in three modes:
 * - live: one line on the terminal, redrawn in place (status, elapsed time, last log line);
 * - plain: a line per status change (and a reminder every 30 s), for logs and pipes;
 * - json: JSON lines on stdout (`step`, `status_change`, `log`, `heartbeat`; the command adds `result`).
 * Live and plain write to stderr: stdout keeps the data (the URL, the JSON events).
 */
type ProgressMode = "live" | "plain" | "json";

export interface Reporter {
  readonly mode: ProgressMode;
  /** A step of the command before or around the wait (packing, uploading, creating). */
  step(step: string, message: string, data?: Record<string, unknown>): void;
  /** The revision being waited for, when its status is first seen and whenever it changes. */
  status(revision: Revision, previous: Revision["status"] | undefined): void;
  log(type: LogType, entry: LogEntry): void;
  /** Whether log lines are wanted at all (the live line shows the last; --verbose or --json shows each). */
  readonly wantsLogs: boolean;
  /** Stops the timers and clears the live line; safe to call twice. */
  close(): void;
}

/** Live on a terminal, unless NO_COLOR is set or the terminal is dumb; JSON when asked. */
export function progressMode(json: boolean, stream: NodeJS.WriteStream = process.stderr, env: NodeJS.ProcessEnv = process.env): ProgressMode {
  if (json) return "json";
  if (!stream.isTTY || env.NO_COLOR !== undefined || env.TERM === "dumb") return "plain";
  return "live";
}

export function createReporter(mode: ProgressMode, options: { verbose: boolean; startedAt: number }): Reporter {
  if (mode === "json") return jsonReporter(options.startedAt);
  if (mode === "live") return liveReporter(options.verbose, options.startedAt);
  return plainReporter(options.verbose, options.startedAt);
}

const elapsedSince = (startedAt: number) => (Date.now() - startedAt) / 1000;

function jsonReporter(startedAt: number): Reporter {
  let current: Revision | undefined;
  const heartbeat = setInterval(() => {
    printJsonLine({
      event: "heartbeat",
      deployment_id: current?.deployment_id ?? null,
      revision_id: current?.id ?? null,
      status: current?.status ?? null,
      elapsed_s: Math.round(elapsedSince(startedAt)),
    });
  }, 10_000);
  heartbeat.unref();
  return {
    mode: "json",
    wantsLogs: true,
    step: (step, message, data = {}) => printJsonLine({ event: "step", step, message, ...data }),
    status(revision, previous) {
      current = revision;
      printJsonLine({
        event: "status_change",
        deployment_id: revision.deployment_id,
        revision_id: revision.id,
        from: previous ?? null,
        to: revision.status,
        status_message: revision.status_message,
        elapsed_s: Math.round(elapsedSince(startedAt)),
      });
    },
    log: (type, entry) => printJsonLine({ event: "log", type, ...entry }),
    close: () => clearInterval(heartbeat),
  };
}

function plainReporter(verbose: boolean, startedAt: number): Reporter {
  let current: Revision | undefined;
  let lastLine = Date.now();
  const say = (text: string) => {
    lastLine = Date.now();
    note(text);
  };
  const stamp = () => `[${formatElapsed(elapsedSince(startedAt))}]`;
  // A quiet CI log still shows the wait is alive.
  const reminder = setInterval(() => {
    if (current && Date.now() - lastLine >= 30_000) say(`${stamp()} still ${current.status}`);
  }, 1_000);
  reminder.unref();
  return {
    mode: "plain",
    wantsLogs: verbose,
    step: (_step, message) => say(message),
    status(revision) {
      current = revision;
      say(`${stamp()} revision ${revision.id}: ${revision.status}${revision.status_message ? ` (${oneLine(revision.status_message, 300)})` : ""}`);
    },
    log(type, entry) {
      if (verbose) say(`  ${type} | ${entry.message}`);
    },
    close: () => clearInterval(reminder),
  };
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function liveReporter(verbose: boolean, startedAt: number): Reporter {
  const out = process.stderr;
  let status = "starting";
  let detail = "";
  let frame = 0;
  let drawn = false;
  let closed = false;
  const clear = () => {
    if (drawn) out.write("\r\x1b[2K");
    drawn = false;
  };
  const draw = () => {
    if (closed) return;
    const width = Math.max(20, (out.columns || 100) - 1);
    const head = `${FRAMES[frame++ % FRAMES.length]} ${status}  ${formatElapsed(elapsedSince(startedAt))}`;
    const rest = detail ? `  ${oneLine(detail, Math.max(0, width - head.length - 2))}` : "";
    out.write(`\r\x1b[2K${oneLine(head, width)}${rest}`);
    drawn = true;
  };
  /** A permanent line above the live one. */
  const above = (text: string) => {
    clear();
    out.write(`${text}\n`);
    draw();
  };
  const ticker = setInterval(draw, 120);
  ticker.unref();
  return {
    mode: "live",
    wantsLogs: true,
    step(step, message) {
      status = step;
      above(message);
    },
    status(revision) {
      status = revision.status;
      // A waiting revision says why it waits; show that until a log line comes.
      detail = revision.status_message ?? detail;
      draw();
    },
    log(_type, entry) {
      detail = entry.message;
      if (verbose) above(`  ${entry.message}`);
      else draw();
    },
    close() {
      if (closed) return;
      clearInterval(ticker);
      clear();
      closed = true;
    },
  };
}
