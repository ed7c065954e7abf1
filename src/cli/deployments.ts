import { createInterface } from "node:readline/promises";
import { Command, type Command as CommandType } from "commander";
import type { Deployment, DeploymentCreateRequest, DeploymentPatchRequest } from "../controlplane/deployments/schemas.ts";
import { DEPLOYMENT_STATUSES } from "../controlplane/deployments/schemas.ts";
import { sessionAction, type Session } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { bodyFrom, defined, mergeBody, printDeployment, settingsOptions, sourceConfigFrom } from "./support/deployment-body.ts";
import { CliFailure, EXIT, UsageError } from "./support/exit.ts";
import { note, printJson, printTable } from "./support/output.ts";
import { reporterFor, waitAndReport, waitOptions } from "./support/report.ts";
import { findDeployment, findIntegration, listDeployments } from "./support/resolve.ts";
import { secretsFrom } from "./support/secrets.ts";
import { deletePrompt } from "./support/delete-prompt.ts";
import { cliName } from "./support/invocation.ts";

/** `slipway deployments list|get|create|update|rotate-credentials|delete`: the deployments API, one subcommand per call. */
export function registerDeploymentsCommand(program: CommandType): void {
  const group = new Command("deployments").description("List, show, create, change, rotate the credentials of and delete deployments");
  const sub = (name: string) => connectionOptions(new Command(name)).option("--json", "print JSON");

  group.addCommand(
    sub("list")
      .description("List the workspace's deployments")
      .option("--name-contains <text>", "only those whose name contains this")
      .option("--status <status>", `only those in this status (${DEPLOYMENT_STATUSES.join(", ")})`)
      .action(
        sessionAction("deployments list", async ({ client, flags, json }) => {
          if (flags.status && !(DEPLOYMENT_STATUSES as readonly string[]).includes(flags.status))
            throw new UsageError(`--status must be one of ${DEPLOYMENT_STATUSES.join(", ")}`);
          const deployments = await listDeployments(client, defined({ name_contains: flags.nameContains, status: flags.status }));
          if (json) return printJson(deployments);
          printTable(
            ["NAME", "ID", "STATUS", "SOURCE", "ACTIVE REVISION", "URL"],
            deployments.map((d) => [
              d.name,
              d.id,
              d.slipway_sleeping ? `${d.status} (sleeping)` : d.status,
              d.source_config.repo_url ?? d.source,
              d.active_revision_id,
              d.url,
            ]),
          );
        }),
      ),
  );

  group.addCommand(
    sub("get")
      .description("Show one deployment")
      .argument("<deployment>", "id or name")
      .action(
        sessionAction("deployments get", async ({ client, json }, idOrName: string) => {
          const deployment = await findDeployment(client, idOrName);
          if (json) printJson(deployment);
          else printDeployment(deployment);
        }),
      ),
  );

  group.addCommand(
    waitOptions(settingsOptions(sub("create")), true)
      .description("Create a deployment: from git with --repo, else one that builds an uploaded directory (upload it with `slipway deploy`)")
      .requiredOption("--name <name>", "deployment name, unique in the workspace")
      .option("--repo <url>", "git repository to build (source github)")
      .option("--ref <ref>", "with --repo: branch, tag or commit", "main")
      .option("--integration <id|name>", "with --repo: the git host integration that can read it")
      .option("--build-on-push", "with --repo: build a new revision on each push to the ref")
      .option("--deployment-type <type>", "dev or prod", "dev")
      .action(sessionAction("deployments create", create)),
  );

  group.addCommand(
    waitOptions(settingsOptions(sub("update")), true)
      .description("Change a deployment; a new source ref, config, secrets or resources make a new revision")
      .argument("<deployment>", "id or name")
      .option("--ref <ref>", "git ref to build (github deployments)")
      .option("--build-on-push", "build a new revision on each push")
      .option("--no-build-on-push", "stop building on push")
      .action(sessionAction("deployments update", update)),
  );

  group.addCommand(
    waitOptions(sub("rotate-credentials"), true)
      .description(
        "Give a deployment's processes a new database credential (PostgreSQL): a revision of the active one takes over, the old credential stops working",
      )
      .argument("<deployment>", "id or name")
      .action(
        sessionAction("deployments rotate-credentials", async (session, idOrName: string) => {
          const startedAt = Date.now();
          const current = await findDeployment(session.client, idOrName);
          const deployment = await session.client.deployments.rotateCredentials(current.id);
          if (!session.flags.wait && !session.json) note(`Revision ${deployment.latest_revision_id} rotates the credential of ${deployment.name}.`);
          return finish(session, deployment, startedAt);
        }),
      ),
  );

  group.addCommand(
    sub("delete")
      .description("Delete deployments: their processes stop, their builds and data are removed")
      .argument("<deployment...>", "ids or names")
      .option("--yes", "do not ask for confirmation on a terminal")
      .action(
        sessionAction("deployments delete", async ({ client, flags, json }, idsOrNames: string[]) => {
          const targets = await Promise.all(idsOrNames.map((item) => findDeployment(client, item)));
          if (!flags.yes && process.stdin.isTTY && process.stderr.isTTY && !(await confirm(deletePrompt(targets)))) {
            note("Nothing deleted.");
            return EXIT.failed;
          }
          for (const deployment of targets) {
            await client.deployments.delete(deployment.id);
            if (!json) note(`Deleted ${deployment.name} (${deployment.id}).`);
          }
          if (json) printJson({ deleted_deployment_ids: targets.map((d) => d.id) });
        }),
      ),
  );

  program.addCommand(group);
}

async function create(session: Session) {
  const startedAt = Date.now();
  const { client, flags } = session;
  if (!flags.repo && (flags.integration || flags.buildOnPush)) throw new UsageError("--integration and --build-on-push go with --repo");
  const integrationId = flags.integration ? (await findIntegration(client, flags.integration)).id : undefined;
  const secrets = secretsFrom(flags);
  const body: DeploymentCreateRequest = mergeBody(bodyFrom(flags), {
    name: flags.name,
    source: flags.repo ? "github" : "internal_source",
    source_config: defined({ ...sourceConfigFrom(flags), deployment_type: flags.deploymentType, repo_url: flags.repo, integration_id: integrationId }),
    source_revision_config: defined({ langgraph_config_path: flags.config ?? "langgraph.json", repo_ref: flags.repo ? flags.ref : undefined }),
    ...(secrets ? { secrets } : {}),
  });
  const deployment = await client.deployments.create(body);
  return finish(
    session,
    deployment,
    startedAt,
    deployment.source === "internal_source" ? `it waits for its source: upload it with \`${cliName()} deploy <dir> --name ${deployment.name}\`` : undefined,
  );
}

async function update(session: Session, idOrName: string) {
  const startedAt = Date.now();
  const { client, flags } = session;
  const current = await findDeployment(client, idOrName);
  const secrets = secretsFrom(flags);
  const revisionConfig = defined({ repo_ref: flags.ref, langgraph_config_path: flags.config });
  const body: DeploymentPatchRequest = mergeBody(
    bodyFrom(flags),
    defined({
      source_config: sourceConfigFrom(flags),
      source_revision_config: Object.keys(revisionConfig).length > 0 ? revisionConfig : undefined,
      secrets,
    }),
  );
  if (Object.keys(body).length === 0)
    throw new UsageError("nothing to change: give --ref, --config, --secret, --env-file, --build-on-push, --min-scale, ... or --body");
  const deployment = await client.deployments.update(current.id, body);
  if (deployment.latest_revision_id === current.latest_revision_id) {
    if (flags.wait) note("No new revision: the change needs no build or restart.");
    return finish({ ...session, flags: { ...flags, wait: false } }, deployment, startedAt);
  }
  return finish(session, deployment, startedAt);
}

/** Prints the deployment, or with --wait follows its latest revision to the end. */
async function finish(session: Session, deployment: Deployment, startedAt: number, hint?: string) {
  const { flags, client, json } = session;
  if (!flags.wait) {
    if (json) printJson(deployment);
    else {
      printDeployment(deployment);
      if (hint) note(`The deployment exists; ${hint}.`);
    }
    return;
  }
  if (deployment.source === "internal_source" && !deployment.source_revision_config.source_tarball_path) {
    throw new CliFailure(
      `deployment ${deployment.name} (${deployment.id}) was made, but its revision waits for an upload: --wait would never end; run \`${cliName()} deploy <dir> --name ${deployment.name}\``,
    );
  }
  const reporter = reporterFor(flags, startedAt);
  reporter.step("revision", `Revision ${deployment.latest_revision_id} of ${deployment.name} (${deployment.id})`, {
    deployment_id: deployment.id,
    revision_id: deployment.latest_revision_id,
  });
  return waitAndReport({ client, deployment, revisionId: deployment.latest_revision_id!, flags, reporter, startedAt });
}

async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}
