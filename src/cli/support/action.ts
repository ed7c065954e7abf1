import type { Command, OptionValues } from "commander";
import type { ControlPlaneClient } from "../../client/index.ts";
import { clientFor, resolveConnection, type Connection } from "./connection.ts";
import { explain } from "./explain.ts";
import type { ExitCode } from "./exit.ts";
import { note } from "./output.ts";

export interface Session {
  connection: Connection;
  client: ControlPlaneClient;
  /** The command's own options (commander's camelCase names). */
  flags: OptionValues;
  json: boolean;
}

/**
 * A command's action: resolves the connection, runs `work`, and ends the process with its
 * exit code, or with the code and words `explain` gives an error. Process exit is explicit:
 * an open keep-alive socket or log stream must not hold a finished command.
 */
export function sessionAction<A extends unknown[]>(
  name: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: most commands' work is an async function that returns nothing (exit code 0).
  work: (session: Session, ...positional: A) => Promise<ExitCode | void>,
  options: { profileMayBeMissing?: boolean } = {},
) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args.at(-1) as Command;
    const flags = command.opts();
    const positional = args.slice(0, -2) as A;
    let connection: Connection | undefined;
    try {
      connection = resolveConnection(flags, process.env, (text) => note(`slipway: warning: ${text}`), options);
      const client = clientFor(connection, (text) => note(`slipway ${name}: ${text}`));
      const code = await work({ connection, client, flags, json: Boolean(flags.json) }, ...positional);
      process.exit(code ?? 0);
    } catch (error) {
      const { message, exitCode } = explain(error, connection);
      note(`slipway ${name}: ${message}`);
      process.exit(exitCode);
    }
  };
}
