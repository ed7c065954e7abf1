import { Command, type Command as CommandType } from "commander";
import type { LogEntry, LogType } from "../client/index.ts";
import { LOG_LEVELS } from "../controlplane/logs/repository.ts";
import { sessionAction } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { count } from "./support/deployment-body.ts";
import { EXIT, UsageError } from "./support/exit.ts";
import { printData, printJsonLine } from "./support/output.ts";
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
    .option("--follow", "keep printing lines as they come; ends with the build, or with Ctrl-C")
    .option("--json", "one JSON line per log line")
    .action(
      sessionAction("logs", async ({ client, flags, json }, idOrName: string) => {
        if (flags.type !== undefined && flags.type !== "build" && flags.type !== "deploy") throw new UsageError(`--type must be build or deploy, not '${flags.type}'`);
        if (flags.level !== undefined && !(LOG_LEVELS as readonly string[]).includes(flags.level)) throw new UsageError(`--level must be one of ${LOG_LEVELS.join(", ")}`);
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
        for await (const entry of client.logs.follow(deployment.id, revisionId, { type, signal: stop.signal })) if (atLeast(entry)) print(type, entry);
        return EXIT.ok;
      }),
    );
  program.addCommand(logs);
}
