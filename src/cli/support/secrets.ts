import { readFileSync } from "node:fs";
import { parse } from "dotenv";
import type { SecretInput } from "../../controlplane/deployments/schemas.ts";
import { UsageError } from "./exit.ts";

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * The secrets of `--env-file` then `--secret` (a later one of the same name wins).
 * `--secret NAME` without `=` takes the value of the environment variable NAME, which keeps
 * it out of the command line (and of `ps`). Undefined when neither option was given, so
 * that the deployment keeps the secrets it has.
 */
export function secretsFrom(flags: { secret?: string[]; envFile?: string }, env: NodeJS.ProcessEnv = process.env): SecretInput[] | undefined {
  if (!flags.secret?.length && !flags.envFile) return undefined;
  const values = new Map<string, string>();
  if (flags.envFile) {
    let text: string;
    try {
      text = readFileSync(flags.envFile, "utf8");
    } catch (error) {
      throw new UsageError(`--env-file ${flags.envFile}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
    }
    for (const [name, value] of Object.entries(parse(text))) values.set(name, value);
  }
  for (const item of flags.secret ?? []) {
    const equals = item.indexOf("=");
    const name = equals === -1 ? item : item.slice(0, equals);
    if (!name) throw new UsageError(`--secret ${item}: give NAME=VALUE, or NAME to take the value of that environment variable`);
    if (equals === -1 && env[name] === undefined) throw new UsageError(`--secret ${name}: no value given and no environment variable ${name} is set`);
    values.set(name, equals === -1 ? env[name]! : item.slice(equals + 1));
  }
  return [...values].map(([name, value]) => ({ name, value }));
}
