import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { LogWriter } from "../log-writer.ts";

const SLIPWAY_BIN = fileURLToPath(new URL("../../../bin/slipway.js", import.meta.url));
const BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

export interface AgentProcessSpec {
  /** For logs: `<revision>#<n>`. */
  name: string;
  cwd: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The revision's deploy log: what the process prints, and its starts, crashes and restarts. */
  log: LogWriter;
  /** The control plane's own log, where crashes show too. */
  serverLog: { warn(object: object, message: string): void };
}

/**
 * One `slipway agent` process of a revision, supervised: started with an IPC channel
 * (it exits when the control plane goes away, even killed), its output sent to the
 * deploy log, restarted with backoff (1 s up to 30 s) when it dies unasked. `url` is its
 * loopback address while it listens.
 */
export class AgentProcess {
  url: string | undefined;
  private child: ChildProcess | undefined;
  private stopping = false;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly spec: AgentProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const { spec } = this;
    const child = spawn(process.execPath, [SLIPWAY_BIN, "agent", ...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    this.child = child;
    spec.log.info(`[${spec.name}] started (pid ${child.pid}).`);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const listening = parseListening(line);
      if (listening) {
        this.url = listening;
        spec.log.info(`[${spec.name}] listening on ${listening}.`);
        return;
      }
      spec.log.info(line);
    });
    createInterface({ input: child.stderr! }).on("line", (line) => spec.log.line("WARNING", line));
    child.on("error", (error) => spec.log.error(`[${spec.name}] could not start: ${error.message}`));
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.url = undefined;
        this.child = undefined;
        resolve();
        if (this.stopping) {
          spec.log.info(`[${spec.name}] stopped.`);
          return;
        }
        const delay = BACKOFF_MS[Math.min(this.crashes, BACKOFF_MS.length - 1)];
        this.crashes++;
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        spec.log.error(`[${spec.name}] ${how}; restarting in ${delay / 1000} s.`);
        spec.serverLog.warn({ process: spec.name, code, signal, restart_in_ms: delay }, "agent process died; restarting");
        this.restartTimer = setTimeout(() => {
          this.restartTimer = undefined;
          if (!this.stopping) this.start();
        }, delay);
        this.restartTimer.unref();
      });
    });
  }

  /** Answers 200 on /ok now. */
  async healthy(timeoutMs = 1_000): Promise<boolean> {
    if (!this.url) return false;
    try {
      const response = await fetch(`${this.url}/ok`, { signal: AbortSignal.timeout(timeoutMs) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  }

  /** Stops claiming new runs; requests and runs in progress go on. */
  drain(): void {
    if (this.child?.connected) this.child.send({ type: "drain" }, () => undefined);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => {
      this.spec.log.line("WARNING", `[${this.spec.name}] still running ${graceMs / 1000} s after SIGTERM: SIGKILL.`);
      child.kill("SIGKILL");
    }, graceMs);
    await this.exited;
    clearTimeout(killer);
  }
}

function parseListening(line: string): string | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(line) as { event?: string; url?: string };
    return parsed.event === "listening" && typeof parsed.url === "string" ? parsed.url : undefined;
  } catch {
    return undefined;
  }
}
