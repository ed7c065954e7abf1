import { createInterface } from "node:readline/promises";
import { Command, type Command as CommandType } from "commander";
import { sessionAction } from "./support/action.ts";
import type { ControlPlaneClient } from "../client/index.ts";
import { clientFor, connectionOptions } from "./support/connection.ts";
import { UsageError } from "./support/exit.ts";
import { maskKey } from "./support/explain.ts";
import { note } from "./support/output.ts";
import { writeProfile } from "./support/profiles.ts";

/**
 * `slipway login`: saves the address, the workspace and the API key as a named profile,
 * after checking them against the server (a typo found now, not at the next deploy).
 * The key comes from --api-key, SLIPWAY_API_KEY, a prompt on a terminal, or stdin.
 */
export function registerLoginCommand(program: CommandType): void {
  const login = connectionOptions(new Command("login"))
    .description("Check and save the control plane's address, API key and workspace as a profile (the key file is readable by you only)")
    .option("--no-verify", "save without asking the server whether the key works")
    .action(
      sessionAction(
        "login",
        async ({ connection, flags }) => {
          const apiKey =
            connection.apiKey && connection.from.apiKey !== `profile '${connection.profile}'` ? connection.apiKey : await askKey(connection.apiKey);
          let checked = { ...connection, apiKey, from: { ...connection.from, apiKey: connection.from.apiKey ?? "the prompt" } };
          if (flags.verify !== false) {
            // No workspace given: an organization with one workspace needs no choice.
            if (!checked.tenantId) checked = { ...checked, tenantId: await onlyWorkspace(clientFor(checked)) };
            // Any call that needs the key and the workspace; a failure is explained (exit 5) and nothing is saved.
            await clientFor(checked).deployments.list({ limit: 1 });
          }
          const tenantId = checked.tenantId;
          const files = writeProfile(connection.profile, { url: connection.url, apiKey, tenantId });
          note(
            `Saved profile '${connection.profile}': ${connection.url}, key ${maskKey(apiKey)}${tenantId ? `, workspace ${tenantId}` : ""}` +
              `${flags.verify !== false ? " (checked)" : ""}.\n  ${files.config}\n  ${files.credentials} (mode 0600)`,
          );
        },
        { profileMayBeMissing: true },
      ),
    );
  program.addCommand(login);
}

/**
 * The workspace to save when none was given: the only one an organization key reaches,
 * none for a workspace key (it needs no X-Tenant-Id). Several: the user must choose.
 */
async function onlyWorkspace(client: ControlPlaneClient): Promise<string | undefined> {
  const reached = await client.workspaces.list();
  if (reached.scope === "workspace" || reached.resources.length === 1) return reached.scope === "workspace" ? undefined : reached.resources[0]!.id;
  const listed = reached.resources.map((w) => `${w.id} (${w.name})`).join(", ");
  throw new UsageError(`this key's organization has ${reached.resources.length} workspaces: choose one with --tenant-id (${listed})`);
}

/** A key typed at a prompt (not echoed) or piped on stdin; `current` is kept on an empty answer. */
async function askKey(current: string | undefined): Promise<string> {
  if (!process.stdin.isTTY) {
    let text = "";
    for await (const chunk of process.stdin) text += chunk;
    const key = text.trim() || current;
    if (!key) throw new UsageError("no API key: pass --api-key, set SLIPWAY_API_KEY, or pipe it on stdin");
    return key;
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  // Hide what is typed: readline echoes through _writeToOutput.
  const rl = prompt as unknown as { _writeToOutput: (text: string) => void; output: NodeJS.WriteStream };
  let asked = false;
  rl._writeToOutput = (text: string) => {
    if (!asked) rl.output.write(text);
  };
  try {
    const question = prompt.question(`API key${current ? " (Enter keeps the saved one)" : ""}: `);
    asked = true;
    const key = (await question).trim() || current;
    process.stderr.write("\n");
    if (!key) throw new UsageError("no API key given");
    return key;
  } finally {
    prompt.close();
  }
}
