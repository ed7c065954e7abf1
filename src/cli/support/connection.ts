import type { Command } from "commander";
import { createControlPlaneClient, type ControlPlaneClient } from "../../client/index.ts";
import { UsageError } from "./exit.ts";
import { readProfile } from "./profiles.ts";
import { cliName } from "./invocation.ts";

const DEFAULT_URL = "http://127.0.0.1:8080";

interface ConnectionFlags {
  url?: string;
  apiKey?: string;
  tenantId?: string;
  profile?: string;
}

/** Where each setting came from, so an error can say which one to fix. */
export interface Connection {
  url: string;
  apiKey?: string;
  tenantId?: string;
  profile: string;
  from: { url: string; apiKey?: string; tenantId?: string };
}

/** --url, --api-key, --tenant-id and --profile, on every command that talks to the control plane. */
export function connectionOptions(command: Command): Command {
  return command
    .option("--url <url>", `control plane address (env SLIPWAY_URL; default: the profile's, else ${DEFAULT_URL})`)
    .option("--api-key <key>", "API key, sent as X-Api-Key (env SLIPWAY_API_KEY; default: the profile's)")
    .option("--tenant-id <id>", "workspace id, sent as X-Tenant-Id (env SLIPWAY_TENANT_ID; default: the profile's)")
    .option("--profile <name>", "profile saved by `slipway login` (env SLIPWAY_PROFILE; default: default)");
}

/** Each setting from its flag, else the environment, else the profile; the URL has a default. */
export function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  warn: (text: string) => void = () => undefined,
  /** `login` makes the profile it names. */
  options: { profileMayBeMissing?: boolean } = {},
): Connection {
  const profileName = flags.profile ?? env.SLIPWAY_PROFILE ?? "default";
  const profile = readProfile(profileName, env, warn);
  if (!profile && (flags.profile ?? env.SLIPWAY_PROFILE) && !options.profileMayBeMissing) {
    throw new UsageError(`no profile named '${profileName}': create it with \`${cliName()} login --profile ${profileName}\``);
  }
  const pick = (flag: string | undefined, flagName: string, envName: string, saved: string | undefined): [string | undefined, string | undefined] => {
    if (flag) return [flag, flagName];
    if (env[envName]) return [env[envName], envName];
    if (saved) return [saved, `profile '${profileName}'`];
    return [undefined, undefined];
  };
  const [url, urlFrom] = pick(flags.url, "--url", "SLIPWAY_URL", profile?.url);
  const [apiKey, apiKeyFrom] = pick(flags.apiKey, "--api-key", "SLIPWAY_API_KEY", profile?.apiKey);
  const [tenantId, tenantFrom] = pick(flags.tenantId, "--tenant-id", "SLIPWAY_TENANT_ID", profile?.tenantId);
  const address = url ?? DEFAULT_URL;
  if (!/^https?:\/\/[^\s/]+/i.test(address)) throw new UsageError(`${urlFrom ?? "the URL"} must be an http:// or https:// address, not '${address}'`);
  return { url: address, apiKey, tenantId, profile: profileName, from: { url: urlFrom ?? "the default", apiKey: apiKeyFrom, tenantId: tenantFrom } };
}

export function clientFor(connection: Connection, onRetry?: (text: string) => void): ControlPlaneClient {
  return createControlPlaneClient({
    url: connection.url,
    apiKey: connection.apiKey,
    tenantId: connection.tenantId,
    userAgent: "slipway-cli/0.1.0",
    onRetry: onRetry && ((event) => onRetry(`${event.method} ${event.path}: ${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)} s`)),
  });
}
