import { ConnectionError, ControlPlaneError, type ControlPlaneClient, type LogEntry, type LogType } from "../../client/index.ts";
import type { Revision } from "../../controlplane/revisions/schemas.ts";
import { isFailure, isTerminal } from "../../controlplane/revisions/state-machine.ts";
import { EXIT, type ExitCode } from "./exit.ts";
import type { Reporter } from "./progress.ts";

/**
 * Waits for a revision to settle, polling its status (every second) and following its log
 * for the reporter. Ends on DEPLOYED, a *_FAILED, INTERRUPTED or SKIPPED, at the timeout, or
 * at Ctrl-C, which stops the waiting only: the revision goes on on the server.
 */
type Outcome = "deployed" | "failed" | "timeout" | "interrupted" | "stopped";

export interface WaitResult {
  outcome: Outcome;
  exitCode: ExitCode;
  revision: Revision;
  /** Of a failed revision: the last lines of the log of the step that failed. */
  logTail: LogEntry[];
  logType?: LogType;
}

interface WaitInput {
  client: ControlPlaneClient;
  deploymentId: string;
  revisionId: string;
  timeoutSeconds: number;
  reporter: Reporter;
  pollMs?: number;
  /** How long the control plane may stay unreachable during a wait (a restart) before it fails. */
  outageSeconds?: number;
}

const TAIL_LINES = 30;
const BUILD_PHASE: readonly Revision["status"][] = ["QUEUED", "CREATING", "AWAITING_BUILD", "BUILDING"];
const DEPLOY_PHASE: readonly Revision["status"][] = ["AWAITING_DEPLOY", "DEPLOYING"];

/** The pipeline's words for a server that never answered /ok (pipeline/runtime): a timeout, not a crash. */
const READINESS_TIMEOUT = /\(the readiness timeout\)/;

export async function waitForRevision(input: WaitInput): Promise<WaitResult> {
  const { client, deploymentId, revisionId, reporter } = input;
  const stop = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    // A second Ctrl-C means now.
    if (++interrupts > 1) process.exit(EXIT.stopped);
    stop.abort("sigint");
  };
  process.on("SIGINT", onSigint);
  const deadline = Date.now() + input.timeoutSeconds * 1000;
  const logs = new LogFollower(client, deploymentId, revisionId, reporter);
  let revision: Revision | undefined;
  let failingSince: number | undefined;
  try {
    for (;;) {
      try {
        const seen = await client.revisions.get(deploymentId, revisionId);
        failingSince = undefined;
        if (seen.status !== revision?.status) reporter.status(seen, revision?.status);
        revision = seen;
      } catch (error) {
        // A control plane that restarts is away for seconds: keep asking, for a while.
        const passing = error instanceof ConnectionError || (error instanceof ControlPlaneError && error.status >= 500);
        failingSince ??= Date.now();
        if (!passing || !revision || Date.now() - failingSince > (input.outageSeconds ?? 60) * 1000) throw error;
      }
      if (revision && reporter.wantsLogs) logs.followFor(revision.status);
      if (revision && isTerminal(revision.status)) return await settle(revision);
      if (stop.signal.aborted) return { outcome: "stopped", exitCode: EXIT.stopped, revision: revision!, logTail: [] };
      if (Date.now() >= deadline) return { outcome: "timeout", exitCode: EXIT.timeout, revision: revision!, logTail: [] };
      await sleep(Math.min(input.pollMs ?? 1_000, Math.max(0, deadline - Date.now())), stop.signal);
      if (stop.signal.aborted) return { outcome: "stopped", exitCode: EXIT.stopped, revision: revision!, logTail: [] };
    }
  } finally {
    process.off("SIGINT", onSigint);
    await logs.stop();
  }

  async function settle(settled: Revision): Promise<WaitResult> {
    if (settled.status === "DEPLOYED") return { outcome: "deployed", exitCode: EXIT.ok, revision: settled, logTail: [] };
    if (!isFailure(settled.status)) return { outcome: "interrupted", exitCode: EXIT.interrupted, revision: settled, logTail: [] };
    const logType: LogType = settled.status === "DEPLOY_FAILED" ? "deploy" : "build";
    // A failed command's last lines are in the status message already: not printed twice.
    const carriesTail = settled.status_message?.includes(OUTPUT_TAIL_HEADING) ?? false;
    const logTail = carriesTail ? [] : await lastLines(client, deploymentId, revisionId, logType).catch(() => []);
    const timedOut = settled.status === "DEPLOY_FAILED" && READINESS_TIMEOUT.test(settled.status_message ?? "");
    return { outcome: timedOut ? "timeout" : "failed", exitCode: timedOut ? EXIT.timeout : EXIT.failed, revision: settled, logTail, logType };
  }
}

/** The heading under which a failed step's status message lists its command's last lines (pipeline/failure.ts). */
const OUTPUT_TAIL_HEADING = "\nLast lines of its output:\n";

async function lastLines(client: ControlPlaneClient, deploymentId: string, revisionId: string, type: LogType, count = TAIL_LINES): Promise<LogEntry[]> {
  const page = await client.logs.page(deploymentId, revisionId, { type, order: "desc", limit: count });
  return page.logs.reverse();
}

/**
 * Follows the build log while the revision builds, then the deploy log while it starts.
 * Best effort: a log stream that fails leaves the wait alone.
 */
class LogFollower {
  private readonly abort = new AbortController();
  private readonly running: Promise<void>[] = [];
  private readonly started = new Set<LogType>();

  constructor(
    private readonly client: ControlPlaneClient,
    private readonly deploymentId: string,
    private readonly revisionId: string,
    private readonly reporter: Reporter,
  ) {}

  followFor(status: Revision["status"]): void {
    if (BUILD_PHASE.includes(status)) this.start("build");
    if (DEPLOY_PHASE.includes(status)) this.start("deploy");
  }

  /** Lets the streams deliver their last lines for a moment, then closes them (a served revision's deploy log never ends). */
  async stop(): Promise<void> {
    const done = Promise.all(this.running);
    const timer = setTimeout(() => this.abort.abort(), 1_500);
    await done;
    clearTimeout(timer);
  }

  private start(type: LogType): void {
    if (this.started.has(type)) return;
    this.started.add(type);
    const follow = async () => {
      try {
        for await (const entry of this.client.logs.follow(this.deploymentId, this.revisionId, { type, signal: this.abort.signal }))
          this.reporter.log(type, entry);
      } catch {
        // The status poll reports what matters; a log line missed is not a failure.
      }
    };
    this.running.push(follow());
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // The listener goes with the sleep: one left per poll would pile up on the signal.
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
