import { readFileSync } from "node:fs";
import type { Command, OptionValues } from "commander";
import type { Deployment, SourceConfigRequest } from "../../controlplane/deployments/schemas.ts";
import type { Revision } from "../../controlplane/revisions/schemas.ts";
import { UsageError } from "./exit.ts";
import { printFields } from "./output.ts";
import { collect } from "./secrets.ts";

/** Flags of `deployments create` and `update` that set a deployment's settings. */
export function settingsOptions(command: Command): Command {
  return command
    .option("--config <path>", "path of langgraph.json in the source")
    .option("--secret <NAME=VALUE>", "a secret (repeatable; NAME alone takes $NAME); replaces the deployment's secrets", collect)
    .option("--env-file <path>", "secrets from a .env file; replaces the deployment's secrets")
    .option("--min-scale <n>", "agent processes to run (resource_spec.min_scale)")
    .option("--memory-mb <n>", "heap of each agent process, in MB (resource_spec.memory_mb)")
    .option("--install-command <command>", "instead of the package manager's install")
    .option("--build-command <command>", "run after the install")
    .option(
      "--sleep-after <minutes>",
      "stop its processes after this many idle minutes, start them on the next request (0: never; default: the control plane's)",
    )
    .option("--body <json>", "more of the request body, as JSON or @file (the flags win over it)");
}

export function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`${flag} must be a whole number, not '${value}'`);
  return number;
}

/** source_config fields the flags give (none given: undefined). */
export function sourceConfigFrom(flags: OptionValues): SourceConfigRequest | undefined {
  const resource = { min_scale: count(flags.minScale, "--min-scale"), memory_mb: count(flags.memoryMb, "--memory-mb") };
  const config: SourceConfigRequest = defined({
    build_on_push: flags.buildOnPush,
    install_command: flags.installCommand,
    build_command: flags.buildCommand,
    resource_spec: Object.values(resource).some((v) => v !== undefined) ? defined(resource) : undefined,
  });
  return Object.keys(config).length > 0 ? config : undefined;
}

/** `--body`: a JSON object, inline or from @file; `--sleep-after` goes on top of it. */
export function bodyFrom(flags: { body?: string; sleepAfter?: string }): Record<string, unknown> {
  const sleep = count(flags.sleepAfter, "--sleep-after");
  const body = bodyText(flags);
  return sleep === undefined ? body : { ...body, slipway_sleep_after_minutes: sleep };
}

function bodyText(flags: { body?: string }): Record<string, unknown> {
  if (flags.body === undefined) return {};
  const text = flags.body.startsWith("@") ? readText(flags.body.slice(1)) : flags.body;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError("--body must be a JSON object");
  return value as Record<string, unknown>;
}

/** `over` on top of `base`, merging the nested config objects one level deep. */
export function mergeBody<T extends object>(base: Record<string, unknown>, over: T): T {
  const merged: Record<string, unknown> = { ...base, ...over };
  const overFields = over as Record<string, unknown>;
  for (const key of ["source_config", "source_revision_config"]) {
    if (base[key] && overFields[key]) merged[key] = { ...(base[key] as object), ...(overFields[key] as object) };
  }
  return merged as T;
}

export function defined<T extends Record<string, unknown>>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

export function printDeployment(deployment: Deployment): void {
  const source = deployment.source_config.repo_url
    ? `${deployment.source_config.repo_url} @ ${deployment.source_revision_config.repo_ref ?? "-"}`
    : deployment.source === "internal_source"
      ? `uploaded directory${deployment.source_revision_config.source_tarball_path ? "" : " (none uploaded yet)"}`
      : deployment.source;
  printFields([
    ["name", deployment.name],
    ["id", deployment.id],
    ["status", deployment.status],
    ["url", deployment.url],
    ["source", source],
    ["config", deployment.source_revision_config.langgraph_config_path],
    ["build on push", deployment.source_config.build_on_push ?? false],
    ["sleep", sleepLine(deployment)],
    ["latest revision", deployment.latest_revision_id],
    ["active revision", deployment.active_revision_id],
    ["secrets", deployment.secrets.map((s) => s.name).join(", ")],
    ["created", deployment.created_at],
  ]);
}

/** Whether it sleeps now, and its setting (docs/decisions/0039). */
function sleepLine(deployment: Deployment): string {
  const minutes = deployment.slipway_sleep_after_minutes;
  const setting = minutes === null ? "as the control plane's default says" : minutes === 0 ? "never" : `after ${minutes} min idle`;
  if (deployment.slipway_sleeping) return `sleeping since ${deployment.slipway_sleeping_since}; the next request wakes it`;
  return `awake; sleeps ${setting}`;
}

export function printRevision(revision: Revision): void {
  const config = revision.source_revision_config;
  printFields([
    ["id", revision.id],
    ["deployment", revision.deployment_id],
    ["status", revision.status],
    ["message", revision.status_message],
    [
      "source",
      config.repo_ref ? `${revision.source} @ ${config.repo_ref}${config.repo_commit_sha ? ` (${config.repo_commit_sha.slice(0, 12)})` : ""}` : revision.source,
    ],
    ["config", config.langgraph_config_path],
    ["created", revision.created_at],
    ["updated", revision.updated_at],
  ]);
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`--body @${file}: ${(error as Error).message}`);
  }
}
