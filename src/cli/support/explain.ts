import { CommanderError } from "commander";
import { ConnectionError, ControlPlaneError, fieldOf } from "../../client/index.ts";
import type { Connection } from "./connection.ts";
import { CliFailure, EXIT, UsageError, type ExitCode } from "./exit.ts";
import { cliName } from "./invocation.ts";

/**
 * What went wrong, in words a person can act on, and the exit code it ends with. The
 * connection (when known) says where each setting came from: "the key from
 * SLIPWAY_API_KEY", not just "invalid API key".
 */
export function explain(error: unknown, connection?: Connection): { message: string; exitCode: ExitCode } {
  if (error instanceof UsageError) return { message: error.message, exitCode: EXIT.usage };
  if (error instanceof CliFailure) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof CommanderError) return { message: error.message, exitCode: EXIT.usage };
  if (error instanceof ConnectionError) return { message: unreachable(error, connection), exitCode: EXIT.unreachable };
  if (error instanceof ControlPlaneError) {
    if (error.status === 401) return { message: unauthorized(error, connection), exitCode: EXIT.unreachable };
    if (error.status === 403) return { message: forbidden(error, connection), exitCode: EXIT.unreachable };
    if (error.status === 422 && error.problems.length > 0) {
      const lines = error.problems.map((p) => `  ${fieldOf(p) || "request"}: ${p.msg}`);
      return {
        message: [`the control plane refused the request (${error.method} ${error.path}, 422): ${plural(lines.length, "field")} not valid:`, ...lines].join(
          "\n",
        ),
        exitCode: EXIT.failed,
      };
    }
    if (error.status === 429) {
      const wait = error.retryAfterSeconds !== undefined ? ` (try again in ${error.retryAfterSeconds} s)` : "";
      return { message: `the control plane's rate limit refused the request${wait}: ${error.detail}`, exitCode: EXIT.failed };
    }
    return { message: `the control plane answered ${error.status} to ${error.method} ${error.path}: ${error.detail}`, exitCode: EXIT.failed };
  }
  return { message: (error as Error)?.message ?? String(error), exitCode: EXIT.failed };
}

function unreachable(error: ConnectionError, connection?: Connection): string {
  const where = connection ? `${connection.url} (from ${connection.from.url})` : error.url;
  const lines = [`cannot reach the control plane at ${where}: ${error.reason}.`];
  if (error.code === "ECONNREFUSED" || error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") {
    lines.push(`Is the control plane (\`${cliName()} up\`) running there? Set its address with --url, SLIPWAY_URL or \`${cliName()} login --url\`.`);
  }
  if (error.mayHaveApplied) lines.push("The request may have been carried out before the connection failed: check before repeating it.");
  return lines.join("\n");
}

function unauthorized(error: ControlPlaneError, connection?: Connection): string {
  if (!connection?.apiKey) {
    return `the control plane at ${connection?.url ?? "its address"} needs an API key (${error.detail}): pass --api-key, set SLIPWAY_API_KEY, or run \`${cliName()} login\`.`;
  }
  return (
    `the control plane at ${connection.url} refused the API key sent in the X-Api-Key header ` +
    `(${maskKey(connection.apiKey)}, from ${connection.from.apiKey}): ${error.detail}. ` +
    `Check the key: \`${cliName()} up\` prints the first one once; \`${cliName()} admin create-key\` makes another.`
  );
}

function forbidden(error: ControlPlaneError, connection?: Connection): string {
  const key = connection?.apiKey ? `the API key in X-Api-Key (${maskKey(connection.apiKey)}, from ${connection.from.apiKey})` : "the credential";
  if (!connection?.tenantId) {
    return `the control plane refused ${key}: ${error.detail}. Name the workspace with --tenant-id, SLIPWAY_TENANT_ID or \`${cliName()} login --tenant-id\`.`;
  }
  return `the control plane refused ${key} for workspace '${connection.tenantId}' (X-Tenant-Id header, from ${connection.from.tenantId}): ${error.detail}.`;
}

/** Enough of a key to tell which one it was: its public lookup part (as `admin list-keys` shows it), never the secret. */
export function maskKey(key: string): string {
  const lookup = /^slw_[0-9a-f]{16}/.exec(key);
  return lookup ? `${lookup[0]}…` : `not shaped like a Slipway key, slw_…, ${key.length} characters`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
