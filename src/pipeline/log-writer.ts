import type { LogLevel, LogType, NewLogLine } from "../controlplane/logs/lines.ts";
import type { LogSink } from "./context.ts";
import { isRedactable } from "./redaction.ts";

/** Lines kept per revision and log type; older ones are trimmed as new ones arrive. */
const LOG_LINES_KEPT = 20_000;
/** A longer line is cut: a minified bundle printed by a build must not fill the table. */
const MAX_LINE = 8_192;
const FLUSH_MS = 200;
const FLUSH_LINES = 200;

interface LogTarget {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  type: LogType;
}

/**
 * Writes one revision's build or deploy log: lines are redacted (every secret value the
 * revision knows becomes `****`, unless it cannot be told from ordinary words: redaction.ts), cleaned (terminal colours, NUL), cut, batched into one
 * statement every 200 ms, and trimmed to the newest LOG_LINES_KEPT. `tail()` keeps the
 * last lines in memory for failure messages.
 */
export class LogWriter {
  private pending: NewLogLine[] = [];
  private timer: NodeJS.Timeout | undefined;
  private written = 0;
  private flushing: Promise<void> = Promise.resolve();
  private readonly recent: string[] = [];
  private secrets: string[];

  constructor(
    private readonly logs: LogSink,
    private readonly target: LogTarget,
    secrets: readonly string[],
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    // Longest first, so a secret that contains another is hidden whole.
    this.secrets = [...new Set(secrets.filter(isRedactable))].sort((a, b) => b.length - a.length);
  }

  line(level: LogLevel, text: string): void {
    for (const part of text.split(/\r?\n/)) {
      const message = this.clean(part);
      if (message === "") continue;
      this.recent.push(message);
      if (this.recent.length > 100) this.recent.shift();
      this.pending.push({ ...this.target, level, message, timestamp: new Date() });
    }
    if (this.pending.length >= FLUSH_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Adds a value to hide from now on (a key made after the writer). */
  hide(secret: string): void {
    if (isRedactable(secret) && !this.secrets.includes(secret)) this.secrets = [...this.secrets, secret].sort((a, b) => b.length - a.length);
  }

  info(text: string): void {
    this.line("INFO", text);
  }

  error(text: string): void {
    this.line("ERROR", text);
  }

  /** The last `n` lines written (redacted), for a status_message. */
  tail(n: number): string[] {
    return this.recent.slice(-n);
  }

  /** Makes a value safe to show: what the log would store of it. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("****");
    return out;
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        await this.logs.append(batch);
        this.written += batch.length;
        if (this.written > LOG_LINES_KEPT + 1_000) {
          await this.logs.trim(this.target.revisionId, this.target.type, LOG_LINES_KEPT);
          this.written = LOG_LINES_KEPT;
        }
      } catch (error) {
        this.onError(error as Error);
      }
    });
    return this.flushing;
  }

  private clean(text: string): string {
    // eslint-disable-next-line no-control-regex
    const plain = this.redact(text)
      .replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")
      .replace(/\u0000/g, "")
      .trimEnd();
    return plain.length > MAX_LINE ? `${plain.slice(0, MAX_LINE)}… (${plain.length - MAX_LINE} more characters)` : plain;
  }
}
