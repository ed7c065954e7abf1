import { Command, type Command as CommandType } from "commander";
import type { Revision } from "../controlplane/revisions/schemas.ts";
import { REVISION_STATUSES } from "../controlplane/revisions/state-machine.ts";
import { sessionAction } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { count, printRevision } from "./support/deployment-body.ts";
import { EXIT_CODES_HELP, UsageError } from "./support/exit.ts";
import { note, printData, printJson, printTable } from "./support/output.ts";
import { reporterFor, waitAndReport, waitOptions } from "./support/report.ts";
import { findDeployment, revisionOf } from "./support/resolve.ts";

const REVISION_ARG = "revision id, `latest` (default) or `active` (the one serving)";

/** `slipway revisions list|get|wait|redeploy|interrupt`: a deployment's revisions. */
export function registerRevisionsCommand(program: CommandType): void {
  const group = new Command("revisions").description("List, show, wait for, redeploy and interrupt a deployment's revisions");
  const sub = (name: string) => connectionOptions(new Command(name)).option("--json", "print JSON");

  group.addCommand(
    sub("list")
      .description("List a deployment's revisions, newest first")
      .argument("<deployment>", "id or name")
      .option("--status <statuses>", `only these statuses, comma separated (${REVISION_STATUSES.join(", ")})`)
      .option("--limit <n>", "at most this many", "20")
      .action(
        sessionAction("revisions list", async ({ client, flags, json }, idOrName: string) => {
          for (const status of flags.status ? String(flags.status).split(",") : []) {
            if (!(REVISION_STATUSES as readonly string[]).includes(status.trim()))
              throw new UsageError(`--status: '${status}' is not one of ${REVISION_STATUSES.join(", ")}`);
          }
          const deployment = await findDeployment(client, idOrName);
          const page = await client.revisions.list(deployment.id, { limit: count(flags.limit, "--limit"), ...(flags.status ? { status: flags.status } : {}) });
          if (json) return printJson(page.resources);
          const mark = (r: Revision) => (r.id === deployment.active_revision_id ? "*" : "");
          printTable(
            ["ID", "STATUS", "SERVING", "CREATED", "MESSAGE"],
            page.resources.map((r) => [r.id, r.status, mark(r), r.created_at, r.status_message?.split("\n")[0]]),
          );
        }),
      ),
  );

  group.addCommand(
    sub("get")
      .description("Show one revision")
      .argument("<deployment>", "id or name")
      .argument("[revision]", REVISION_ARG)
      .action(
        sessionAction("revisions get", async ({ client, json }, idOrName: string, revisionArg?: string) => {
          const deployment = await findDeployment(client, idOrName);
          const revision = await client.revisions.get(deployment.id, await revisionOf(client, deployment, revisionArg));
          if (json) printJson(revision);
          else printRevision(revision);
        }),
      ),
  );

  group.addCommand(
    waitOptions(connectionOptions(new Command("wait")), false)
      .description("Wait until a revision is DEPLOYED or fails, showing progress (exit codes as `deploy`)")
      .argument("<deployment>", "id or name")
      .argument("[revision]", REVISION_ARG)
      .option("--json", "JSON lines on stdout: status_change, log, heartbeat, result")
      .addHelpText("after", EXIT_CODES_HELP)
      .action(
        sessionAction("revisions wait", async ({ client, flags }, idOrName: string, revisionArg?: string) => {
          const startedAt = Date.now();
          const deployment = await findDeployment(client, idOrName);
          const revisionId = await revisionOf(client, deployment, revisionArg);
          return waitAndReport({ client, deployment, revisionId, flags, reporter: reporterFor(flags, startedAt), startedAt });
        }),
      ),
  );

  group.addCommand(
    waitOptions(sub("redeploy"), true)
      .description("Make a new revision from an earlier one's source and settings (a rollback, or a rebuild)")
      .argument("<deployment>", "id or name")
      .argument("[revision]", REVISION_ARG)
      .action(
        sessionAction("revisions redeploy", async ({ client, flags, json }, idOrName: string, revisionArg?: string) => {
          const startedAt = Date.now();
          const deployment = await findDeployment(client, idOrName);
          const from = await revisionOf(client, deployment, revisionArg);
          const updated = await client.revisions.redeploy(deployment.id, from);
          const revisionId = updated.latest_revision_id!;
          if (!flags.wait) {
            if (json) return printJson(updated);
            note(`Revision ${revisionId} made from ${from}.`);
            return printData(revisionId);
          }
          const reporter = reporterFor(flags, startedAt);
          reporter.step("revision", `Revision ${revisionId} made from ${from}`, { deployment_id: deployment.id, revision_id: revisionId });
          return waitAndReport({ client, deployment: updated, revisionId, flags, reporter, startedAt });
        }),
      ),
  );

  group.addCommand(
    sub("interrupt")
      .description("Stop a revision that is still building or starting (it ends INTERRUPTED)")
      .argument("<deployment>", "id or name")
      .argument("[revision]", REVISION_ARG)
      .action(
        sessionAction("revisions interrupt", async ({ client, json }, idOrName: string, revisionArg?: string) => {
          const deployment = await findDeployment(client, idOrName);
          const revision = await client.revisions.interrupt(deployment.id, await revisionOf(client, deployment, revisionArg));
          if (json) printJson(revision);
          else note(`Revision ${revision.id} of ${deployment.name}: ${revision.status}${revision.status_message ? ` (${revision.status_message})` : ""}.`);
        }),
      ),
  );

  program.addCommand(group);
}
