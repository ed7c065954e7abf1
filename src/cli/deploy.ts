import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { Command, type Command as CommandType } from "commander";
import type { ControlPlaneClient } from "../client/index.ts";
import type { Deployment, SecretInput } from "../controlplane/deployments/schemas.ts";
import { sessionAction, type Session } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { CliFailure, EXIT, EXIT_CODES_HELP, UsageError } from "./support/exit.ts";
import { note } from "./support/output.ts";
import type { Reporter } from "./support/progress.ts";
import { deploymentNamed, findIntegration } from "./support/resolve.ts";
import { reportDetached, reporterFor, timeoutSeconds, waitAndReport, waitOptions } from "./support/report.ts";
import { collect, secretsFrom } from "./support/secrets.ts";
import { cliName } from "./support/invocation.ts";

/**
 * `slipway deploy [dir]`: from a directory (packed and uploaded) or a git repository
 * (--repo) to a served URL in one command. Creates the deployment named --name (default:
 * the folder's or the repository's name) or makes a new revision of the existing one,
 * then waits until it is DEPLOYED and prints its URL.
 */
export function registerDeployCommand(program: CommandType): void {
  const deploy = connectionOptions(new Command("deploy"))
    .description("Deploy a directory or a git repository and wait until it serves; prints the URL")
    .argument("[dir]", "project directory holding langgraph.json (default: the current directory)")
    .option("--config <path>", "the project's langgraph.json: inside the directory, or inside the repository with --repo", "langgraph.json")
    .option("--name <name>", "deployment name (default: the directory's name, or the repository's)")
    .option("--repo <url>", "deploy this git repository instead of a directory")
    .option("--ref <ref>", "with --repo: branch, tag (refs/tags/<tag>) or commit (default: main, or the deployment's current ref)")
    .option("--integration <id|name>", "with --repo: the git host integration that can read it (`slipway integrations list`)")
    .option(
      "--secret <NAME=VALUE>",
      "a secret, as an environment variable of the agent (repeatable; NAME alone takes $NAME); replaces the deployment's secrets",
      collect,
    )
    .option("--env-file <path>", "secrets from a .env file; replaces the deployment's secrets")
    .option("--build-on-push", "with --repo: build a new revision on each push to the ref")
    .option("--detach", "return as soon as the revision is created, without waiting")
    .option("--json", "JSON lines on stdout: step, status_change, log, heartbeat, result")
    .addHelpText(
      "after",
      `${EXIT_CODES_HELP}\n\nExamples:\n  slipway deploy examples/agent\n  slipway deploy --repo https://github.com/me/agent.git --ref main --secret OPENAI_API_KEY\n  slipway deploy . --json --timeout 600 > events.jsonl`,
    );
  waitOptions(deploy, false).action(sessionAction("deploy", (session, dir?: string) => runDeploy(session, dir)));
  program.addCommand(deploy);
}

interface Target {
  deployment: Deployment;
  revisionId: string;
}

async function runDeploy(session: Session, dirArg: string | undefined) {
  const startedAt = Date.now();
  const { flags, client } = session;
  timeoutSeconds(flags.timeout);
  if (flags.repo && dirArg !== undefined) throw new UsageError("give a directory or --repo, not both");
  if (!flags.repo && (flags.ref || flags.integration)) throw new UsageError("--ref and --integration go with --repo");
  if (!flags.repo && flags.buildOnPush) throw new UsageError("--build-on-push goes with --repo: an uploaded directory has no pushes to build on");
  const secrets = secretsFrom(flags);
  const reporter = reporterFor(flags, startedAt);
  try {
    const target = flags.repo ? await fromRepository(client, flags, secrets, reporter) : await fromDirectory(client, dirArg ?? ".", flags, secrets, reporter);
    if (flags.detach) {
      reporter.close();
      return reportDetached(target.deployment, target.revisionId, session.json);
    }
    return await waitAndReport({ client, deployment: target.deployment, revisionId: target.revisionId, flags, reporter, startedAt });
  } finally {
    reporter.close();
  }
}

async function fromDirectory(
  client: ControlPlaneClient,
  dirArg: string,
  flags: Session["flags"],
  secrets: SecretInput[] | undefined,
  reporter: Reporter,
): Promise<Target> {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${dirArg} is not a directory`);
  const { isIgnored, packProject, formatBytes } = await import("./support/pack.ts");
  const configPath = projectConfig(dir, flags.config);
  if (isIgnored(dir, configPath)) throw new UsageError(`${configPath} is left out by .gitignore, so it would not be uploaded`);
  const config = readConfig(dir, configPath);
  const name: string = flags.name ?? basename(dir);
  const warn = (text: string) => note(`slipway deploy: warning: ${text}`);

  // Asked first: a wrong key or address shows before any packing.
  let deployment = await deploymentNamed(client, name);
  if (deployment && deployment.source !== "internal_source") {
    throw new CliFailure(
      `deployment '${name}' builds from ${deployment.source_config.repo_url ?? deployment.source}: deploy it with --repo, or give this one another --name`,
      EXIT.usage,
    );
  }
  reporter.step("pack", `Packing ${dirArg} (${configPath})`);
  const packed = await packProject(dir, { warn });
  try {
    if (packed.links.length > 0) {
      warn(
        `left out ${packed.links.length} symbolic link(s), which an upload may not hold (regular files and folders only): ${packed.links.slice(0, 5).join(", ")}`,
      );
    }
    if (packed.special.length > 0) warn(`left out ${packed.special.length} special file(s): ${packed.special.slice(0, 5).join(", ")}`);
    const envFile = typeof config.env === "string" ? config.env.replace(/^\.\//, "") : undefined;
    if (envFile && !packed.files.some((f) => f.path === envFile)) {
      warn(
        `${configPath} names the env file ${envFile}, which is not uploaded (missing, or left out by .gitignore): give its values with --env-file ${envFile}`,
      );
    }
    reporter.step("pack", `Packed ${packed.files.length} files (${formatBytes(packed.bytes)})`, { files: packed.files.length, bytes: packed.bytes });

    const existed = deployment !== undefined;
    if (!deployment) {
      deployment = await client.deployments.create({
        name,
        source: "internal_source",
        source_config: { deployment_type: "dev" },
        source_revision_config: { langgraph_config_path: configPath },
        ...(secrets ? { secrets } : {}),
      });
      reporter.step("create", `Created deployment ${name} (${deployment.id})`, { deployment_id: deployment.id });
    } else {
      reporter.step("update", `Deploying a new revision of ${name} (${deployment.id})`, { deployment_id: deployment.id });
    }
    const { uploadSource } = await import("./support/upload.ts");
    const objectPath = await uploadSource(client, deployment.id, packed.file, (text) => note(`slipway deploy: ${text}`));
    reporter.step("upload", `Uploaded ${formatBytes(packed.bytes)}`, { deployment_id: deployment.id, object_path: objectPath });
    const patched = await client.deployments.update(deployment.id, {
      source_revision_config: { source_tarball_path: objectPath, langgraph_config_path: configPath },
      ...(existed && secrets ? { secrets } : {}),
    });
    return created(patched, reporter);
  } finally {
    packed.remove();
  }
}

async function fromRepository(client: ControlPlaneClient, flags: Session["flags"], secrets: SecretInput[] | undefined, reporter: Reporter): Promise<Target> {
  const repoUrl: string = flags.repo;
  const name: string = flags.name ?? repositoryName(repoUrl);
  const configPath: string = flags.config;
  const integrationId = flags.integration ? (await findIntegration(client, flags.integration)).id : undefined;
  const existing = await deploymentNamed(client, name);
  if (!existing) {
    const deployment = await client.deployments.create({
      name,
      source: "github",
      source_config: {
        repo_url: repoUrl,
        deployment_type: "dev",
        build_on_push: Boolean(flags.buildOnPush),
        ...(integrationId ? { integration_id: integrationId } : {}),
      },
      source_revision_config: { repo_ref: flags.ref ?? "main", langgraph_config_path: configPath },
      ...(secrets ? { secrets } : {}),
    });
    reporter.step("create", `Created deployment ${name} (${deployment.id}) from ${repoUrl} at ${flags.ref ?? "main"}`, { deployment_id: deployment.id });
    return created(deployment, reporter);
  }
  if (existing.source !== "github") {
    throw new CliFailure(
      `deployment '${name}' is built from an uploaded directory: deploy it with \`${cliName()} deploy <dir> --name ${name}\`, or give this one another --name`,
      EXIT.usage,
    );
  }
  if (existing.source_config.repo_url !== repoUrl) {
    throw new CliFailure(
      `deployment '${name}' builds ${existing.source_config.repo_url}, and a deployment's repository cannot change: give this one another --name`,
      EXIT.usage,
    );
  }
  const ref = flags.ref ?? existing.source_revision_config.repo_ref ?? "main";
  reporter.step("update", `Deploying a new revision of ${name} (${existing.id}) at ${ref}`, { deployment_id: existing.id });
  const patched = await client.deployments.update(existing.id, {
    source_revision_config: { repo_ref: ref, langgraph_config_path: configPath },
    ...(flags.buildOnPush ? { source_config: { build_on_push: true } } : {}),
    ...(secrets ? { secrets } : {}),
  });
  return created(patched, reporter);
}

function created(deployment: Deployment, reporter: Reporter): Target {
  const revisionId = deployment.latest_revision_id!;
  reporter.step("revision", `Revision ${revisionId} created`, { deployment_id: deployment.id, revision_id: revisionId, url: deployment.url });
  return { deployment, revisionId };
}

/** The langgraph.json to deploy, as a path inside `dir` (with `/`): given relative to `dir`, or to the current directory. */
function projectConfig(dir: string, given: string): string {
  const candidates = isAbsolute(given) ? [given] : [resolve(dir, given), resolve(given)];
  for (const candidate of candidates) {
    if (!existsSync(candidate) || !statSync(candidate).isFile()) continue;
    const inside = relative(dir, candidate);
    if (inside.startsWith("..") || isAbsolute(inside)) throw new UsageError(`${given} is outside ${dir}: the configuration must be part of the upload`);
    return inside.split(sep).join("/");
  }
  throw new UsageError(`no ${given} in ${dir}: a LangGraph project has a langgraph.json there (or give its path with --config)`);
}

function readConfig(dir: string, configPath: string): { env?: unknown } {
  try {
    const value = JSON.parse(readFileSync(resolve(dir, configPath), "utf8")) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("it is not a JSON object");
    return value as { env?: unknown };
  } catch (error) {
    throw new UsageError(`${configPath} is not valid: ${(error as Error).message}`);
  }
}

/** git://host/org/agent.git → agent. */
function repositoryName(url: string): string {
  const last =
    url
      .replace(/[/\\]+$/, "")
      .split(/[/:]/)
      .pop() ?? "";
  return last.replace(/\.git$/, "") || "agent";
}
