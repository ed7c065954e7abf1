import type { Command } from "commander";
import type { ControlPlaneClient } from "../../client/index.ts";
import type { Deployment } from "../../controlplane/deployments/schemas.ts";
import { EXIT, UsageError, type ExitCode } from "./exit.ts";
import { formatElapsed, note, printData, printJsonLine } from "./output.ts";
import { createReporter, progressMode, type Reporter } from "./progress.ts";
import { waitForRevision, type WaitResult } from "./wait.ts";
import { cliName } from "./invocation.ts";

const DEFAULT_TIMEOUT = "1800";

/** The options of every command that waits: deploy, revisions wait, and the --wait of the others. */
export function waitOptions(command: Command, withWaitFlag: boolean): Command {
  if (withWaitFlag) command.option("--wait", "wait until the new revision is DEPLOYED (or fails), showing progress");
  return command
    .option("--timeout <seconds>", "how long to wait before giving up with exit code 3", DEFAULT_TIMEOUT)
    .option("--verbose", "print the build and deploy log lines as they come");
}

export function timeoutSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a number of seconds above 0, not '${value}'`);
  return seconds;
}

export function reporterFor(flags: { json?: boolean; verbose?: boolean }, startedAt: number): Reporter {
  return createReporter(progressMode(Boolean(flags.json)), { verbose: Boolean(flags.verbose), startedAt });
}

/** Waits for the revision with progress, then says how it ended; answers the exit code. */
export async function waitAndReport(input: {
  client: ControlPlaneClient;
  deployment: Deployment;
  revisionId: string;
  flags: { timeout?: string; json?: boolean };
  reporter: Reporter;
  startedAt: number;
}): Promise<ExitCode> {
  const { client, deployment, revisionId, reporter } = input;
  let result: WaitResult;
  try {
    result = await waitForRevision({
      client,
      deploymentId: deployment.id,
      revisionId,
      timeoutSeconds: timeoutSeconds(input.flags.timeout ?? DEFAULT_TIMEOUT),
      reporter,
    });
  } finally {
    reporter.close();
  }
  const elapsed = (Date.now() - input.startedAt) / 1000;
  const { revision } = result;
  const again = `${cliName()} revisions wait ${deployment.id} ${revision.id}`;
  const failure = [`revision ${revision.id} of ${deployment.name} ended ${revision.status}${revision.status_message ? `: ${revision.status_message}` : ""}`];
  if (result.logTail.length > 0)
    failure.push(`Last ${result.logTail.length} lines of its ${result.logType} log:`, ...result.logTail.map((entry) => `  ${entry.message}`));

  switch (result.outcome) {
    case "deployed":
      note(`Deployed: revision ${revision.id} of ${deployment.name} serves at ${deployment.url} (${formatElapsed(elapsed)}).`);
      break;
    case "failed":
    case "interrupted":
      note(failure.join("\n"));
      break;
    case "timeout":
      note(
        revision.status === "DEPLOY_FAILED"
          ? failure.join("\n")
          : `Stopped waiting after ${formatElapsed(timeoutSeconds(input.flags.timeout ?? DEFAULT_TIMEOUT))} (--timeout): revision ${revision.id} of ${deployment.name} is still ${revision.status}, and goes on on the server. Wait again: ${again}`,
      );
      break;
    case "stopped":
      note(
        `Stopped waiting (Ctrl-C); the revision goes on on the server: deployment ${deployment.id}, revision ${revision.id}, ${revision.status}.\n` +
          `Wait again: ${again}\nStop it: ${cliName()} revisions interrupt ${deployment.id} ${revision.id}`,
      );
      break;
  }
  if (input.flags.json) {
    printJsonLine({
      event: "result",
      outcome: result.outcome,
      exit_code: result.exitCode,
      status: revision.status,
      status_message: revision.status_message,
      deployment_id: deployment.id,
      revision_id: revision.id,
      url: result.outcome === "deployed" ? deployment.url : null,
      log_tail: result.logTail.map((entry) => entry.message),
      elapsed_s: Math.round(elapsed),
    });
  } else if (result.outcome === "deployed") {
    printData(deployment.url);
  }
  return result.exitCode;
}

/** --detach: the revision exists; say where it is and how to follow it. */
export function reportDetached(deployment: Deployment, revisionId: string, json: boolean): ExitCode {
  note(
    `Revision ${revisionId} of ${deployment.name} is on its way; not waiting (--detach). Follow it: ${cliName()} revisions wait ${deployment.id} ${revisionId}`,
  );
  if (json)
    printJsonLine({ event: "result", outcome: "detached", exit_code: EXIT.ok, deployment_id: deployment.id, revision_id: revisionId, url: deployment.url });
  else printData(deployment.url);
  return EXIT.ok;
}
