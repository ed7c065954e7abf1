import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { corsConfigProblem, type CorsConfig } from "../../http/cors.ts";
import { describeEndpoint, endpointOfListening, type AgentEndpoint } from "./agent-endpoint.ts";
import type { LogWriter } from "../log-writer.ts";
import { answersOk } from "./health-probe.ts";
import type { ConfinedLaunch } from "./isolation.ts";
import { RestartBackoff } from "./restart-backoff.ts";
import type { ReplicaActivity } from "./runtime.ts";

export const SLIPWAY_BIN = fileURLToPath(new URL("../../../bin/slipway.js", import.meta.url));

export interface AgentProcessSpec {
  /** For logs: `<revision>#<n>`. */
  name: string;
  cwd: string;
  /** Where it listens (`--socket`): a path in the runtime's private directory. */
  socketPath: string;
  /** Its other arguments. */
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The revision's deploy log: what the process prints, and its starts, crashes and restarts. */
  log: LogWriter;
  /** The control plane's own log, where crashes show too. */
  serverLog: { warn(object: object, message: string): void };
  /** Wraps its command line in the deployment's sandbox and limits (a new one each start). */
  confine(argv: string[], firstFd: number): ConfinedLaunch;
}

/**
 * One `slipway agent` process of a revision, supervised: started with an IPC channel
 * (it exits when the control plane goes away, even killed), its output sent to the
 * deploy log, restarted with backoff (1 s up to 30 s) when it dies unasked. `endpoint`
 * is where it listens (its Unix socket), set while it does.
 */
export class AgentProcess {
  endpoint: AgentEndpoint | undefined;
  /** http.cors of its langgraph.json, from its listening line; kept across restarts. */
  cors: CorsConfig | undefined;
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly restarts = new RestartBackoff();
  private exited: Promise<void> = Promise.resolve();
  private asked = 0;

  constructor(private readonly spec: AgentProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const { spec } = this;
    // A socket file left by a process that was killed would make the new one fail to listen.
    if (process.platform !== "win32") rmSync(spec.socketPath, { force: true });
    const launch = spec.confine([process.execPath, SLIPWAY_BIN, "agent", "--socket", spec.socketPath, ...spec.args], 4);
    const { program, args, fds } = launch.command;
    let child: ChildProcess;
    try {
      child = spawn(program, args, { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe", "ipc", ...fds] });
    } finally {
      launch.spawned();
    }
    this.child = child;
    spec.log.info(`[${spec.name}] started (pid ${child.pid}).`);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const listening = parseListening(line);
      if (listening) {
        this.endpoint = listening.endpoint;
        this.cors = listening.cors;
        spec.log.info(`[${spec.name}] listening on ${describeEndpoint(listening.endpoint)}.`);
        return;
      }
      spec.log.info(line);
    });
    createInterface({ input: child.stderr! }).on("line", (line) => spec.log.line("WARNING", line));
    child.on("error", (error) => spec.log.error(`[${spec.name}] could not start: ${error.message}`));
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.endpoint = undefined;
        this.child = undefined;
        const limited = launch.finish();
        if (limited) spec.log.error(`[${spec.name}] stopped by its resource limits: ${limited}.`);
        resolve();
        if (this.stopping) {
          spec.log.info(`[${spec.name}] stopped.`);
          return;
        }
        const delay = this.restarts.next();
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        spec.log.error(`[${spec.name}] ${how}; restarting in ${delay / 1000} s.`);
        spec.serverLog.warn({ process: spec.name, code, signal, limited, restart_in_ms: delay }, "agent process died; restarting");
        this.restarts.schedule(delay, () => {
          if (!this.stopping) this.start();
        });
      });
    });
  }

  /** Answers 200 on /ok now. */
  healthy(timeoutMs = 1_000): Promise<boolean> {
    return answersOk(this.endpoint, timeoutMs);
  }

  /** Stops claiming new runs; requests and runs in progress go on. */
  drain(): void {
    if (this.child?.connected) this.child.send({ type: "drain" }, () => undefined);
  }

  /**
   * Asks it, over its IPC channel, what keeps its deployment awake: runs underway and its
   * next scheduled work. Undefined when it cannot answer within `timeoutMs` (starting,
   * stopping, stuck): the caller then leaves the deployment awake.
   */
  activity(timeoutMs: number): Promise<ReplicaActivity | undefined> {
    const child = this.child;
    if (!child?.connected || !this.endpoint) return Promise.resolve(undefined);
    const id = ++this.asked;
    return new Promise((resolve) => {
      const finish = (answer: ReplicaActivity | undefined) => {
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve(answer);
      };
      const onMessage = (message: { type?: string; id?: number; busy?: unknown; next_due_in_seconds?: unknown }) => {
        if (message?.type !== "activity" || message.id !== id) return;
        const due = message.next_due_in_seconds;
        finish({ busy: message.busy !== false, next_due_in_seconds: typeof due === "number" ? due : null });
      };
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      child.on("message", onMessage);
      child.send({ type: "activity", id }, (error) => {
        if (error) finish(undefined);
      });
    });
  }

  /** Asks it to stop (its SIGTERM path), then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.restarts.cancel();
    const child = this.child;
    if (!child) return;
    // Through the IPC channel: a signal would reach the sandbox (bubblewrap), which does not pass it on.
    if (child.connected) child.send({ type: "stop" }, () => undefined);
    else child.kill("SIGTERM");
    const killer = setTimeout(() => {
      this.spec.log.line("WARNING", `[${this.spec.name}] still running ${graceMs / 1000} s after SIGTERM: SIGKILL.`);
      child.kill("SIGKILL");
    }, graceMs);
    await this.exited;
    clearTimeout(killer);
  }
}

/** The agent server's `listening` line: where it listens, and its http.cors. */
export function parseListening(line: string): { endpoint: AgentEndpoint; cors?: CorsConfig } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(line) as { event?: string; socket?: unknown; base_path?: unknown; url?: unknown; cors?: unknown };
    const endpoint = parsed.event === "listening" ? endpointOfListening(parsed) : undefined;
    if (!endpoint) return undefined;
    const cors = parsed.cors && !corsConfigProblem(parsed.cors) ? (parsed.cors as CorsConfig) : undefined;
    return { endpoint, cors };
  } catch {
    return undefined;
  }
}
