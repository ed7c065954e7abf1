import { Command, type Command as CommandType } from "commander";
import type { ControlPlaneClient, LogEntry, LogType } from "../client/index.ts";
import { isFailure, isTerminal } from "../controlplane/revisions/state-machine.ts";
import { LOG_LEVELS } from "../controlplane/logs/lines.ts";
import { sessionAction } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { count } from "./support/deployment-body.ts";
import { EXIT, type ExitCode, UsageError } from "./support/exit.ts";
import { note, printData, printJsonLine } from "./support/output.ts";
import { findDeployment, revisionOf } from "./support/resolve.ts";

/**
 * `slipway logs <deployment>`: a revision's build or deploy log, its last lines, or with
 * --follow its lines as they are written until the build ends (build) or Ctrl-C (deploy).
 */
export function registerLogsCommand(program: CommandType): void {
  const logs = connectionOptions(new Command("logs"))
    .description("Print a revision's build or deploy log (--follow: as it is written)")
    .argument("<deployment>", "id or name")
    .option("--revision <id>", "revision id, `latest` (default) or `active` (the one serving)")
    .option("--type <type>", "build or deploy (default: deploy for a DEPLOYED revision, else build)")
    .option("--level <level>", `only lines at this level or above (${LOG_LEVELS.join(", ")})`)
    .option("--tail <n>", "the last n lines (without --follow; default 100, at most 1000)", "100")
    .option(
      "--follow",
      "keep printing lines as they come: with --type build until the build ends, with --type deploy until Ctrl-C; without --type, a revision on its way is followed through its build and start until it serves or fails",
    )
    .option("--json", "one JSON line per log line")
    .action(
      sessionAction("logs", async ({ client, flags, json }, idOrName: string) => {
        if (flags.type !== undefined && flags.type !== "build" && flags.type !== "deploy")
          throw new UsageError(`--type must be build or deploy, not '${flags.type}'`);
        if (flags.level !== undefined && !(LOG_LEVELS as readonly string[]).includes(flags.level))
          throw new UsageError(`--level must be one of ${LOG_LEVELS.join(", ")}`);
        const tail = count(flags.tail, "--tail")!;
        if (tail < 1 || tail > 1000) throw new UsageError("--tail must be between 1 and 1000");
        const deployment = await findDeployment(client, idOrName);
        const revisionId = await revisionOf(client, deployment, flags.revision);
        let type: LogType = flags.type;
        if (!type) type = (await client.revisions.get(deployment.id, revisionId)).status === "DEPLOYED" ? "deploy" : "build";
        const print = (type: LogType, entry: LogEntry) => {
          if (json) printJsonLine({ type, ...entry });
          else printData(`${entry.timestamp} ${entry.level.padEnd(7)} ${entry.message}`);
        };
        const atLeast = (entry: LogEntry) => !flags.level || LOG_LEVELS.indexOf(entry.level) >= LOG_LEVELS.indexOf(flags.level);

        if (!flags.follow) {
          const page = await client.logs.page(deployment.id, revisionId, { type, order: "desc", limit: tail, ...(flags.level ? { level: flags.level } : {}) });
          for (const entry of page.logs.reverse()) print(type, entry);
          return;
        }
        // Ctrl-C ends a follow quietly: it only reads.
        const stop = new AbortController();
        process.once("SIGINT", () => stop.abort());
        const follow = async (type: LogType, signal: AbortSignal) => {
          for await (const entry of client.logs.follow(deployment.id, revisionId, { type, signal })) if (atLeast(entry)) print(type, entry);
        };
        if (flags.type || type === "deploy") {
          await follow(type, stop.signal);
          return EXIT.ok;
        }
        // No --type, and the revision is on its way: its build, then its start, until it serves or fails.
        await follow("build", stop.signal);
        if (stop.signal.aborted) return EXIT.ok;
        return followStart(client, deployment.id, revisionId, (signal) => follow("deploy", signal), stop.signal);
      }),
    );
  program.addCommand(logs);
}

/** How often the revision's status is read while its start is followed. */
const STATUS_POLL_MS = 1_000;

/**
 * Follows the deploy log of a revision that has finished building until it is DEPLOYED
 * or has failed (the deploy log itself goes on while the revision serves). Exits 0 when
 * it serves, 1 when it failed, as `deploy` does.
 */
async function followStart(
  client: ControlPlaneClient,
  deploymentId: string,
  revisionId: string,
  follow: (signal: AbortSignal) => Promise<void>,
  stop: AbortSignal,
): Promise<ExitCode> {
  const done = new AbortController();
  const signal = AbortSignal.any([stop, done.signal]);
  const following = follow(signal);
  let revision = await client.revisions.get(deploymentId, revisionId);
  while (!isTerminal(revision.status) && !stop.aborted) {
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
    revision = await client.revisions.get(deploymentId, revisionId);
  }
  // The lines written up to the last status change are on their way: give them a moment.
  if (!stop.aborted) await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
  done.abort();
  await following;
  if (stop.aborted) return EXIT.ok;
  note(`revision ${revision.id}: ${revision.status}${revision.status_message ? `: ${revision.status_message}` : ""}`);
  return isFailure(revision.status) || revision.status === "INTERRUPTED" ? EXIT.failed : EXIT.ok;
}
