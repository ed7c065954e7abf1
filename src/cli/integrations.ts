import { Command, type Command as CommandType } from "commander";
import type { GithubIntegration } from "../controlplane/integrations/schemas.ts";
import { sessionAction } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { UsageError } from "./support/exit.ts";
import { note, printFields, printJson, printTable } from "./support/output.ts";
import { findIntegration } from "./support/resolve.ts";
import { cliName } from "./support/invocation.ts";

/** `slipway integrations list|repos|add`: the git hosts deployments build from. */
export function registerIntegrationsCommand(program: CommandType): void {
  const group = new Command("integrations").description("List and add git host integrations, and list their repositories");
  const sub = (name: string) => connectionOptions(new Command(name)).option("--json", "print JSON");

  group.addCommand(
    sub("list")
      .description("List the workspace's git host integrations")
      .action(
        sessionAction("integrations list", async ({ client, json }) => {
          const all = await client.integrations.list();
          if (json) return printJson(all);
          printTable(
            ["NAME", "ID", "BASE URL", "CREATED"],
            all.map((i) => [i.name, i.id, i.base_url, i.created_at]),
          );
        }),
      ),
  );

  group.addCommand(
    sub("repos")
      .description("List the repositories an integration can read")
      .argument("<integration>", "id or name")
      .action(
        sessionAction("integrations repos", async ({ client, json }, idOrName: string) => {
          const integration = await findIntegration(client, idOrName);
          const repos = await client.integrations.repos(integration.id);
          if (json) return printJson(repos);
          printTable(
            ["NAME", "DEFAULT BRANCH", "URL"],
            repos.map((r) => [`${r.owner}/${r.name}`, r.default_branch, r.url]),
          );
        }),
      ),
  );

  group.addCommand(
    sub("add")
      .description("Register a git host (GitHub, a self-hosted git server, git:// or ssh://)")
      .requiredOption("--name <name>", "a name for it, unique in the workspace")
      .requiredOption("--base-url <url>", "the host's base URL, e.g. https://github.com/ or git://127.0.0.1:9418/")
      .option("--token-env <variable>", "the environment variable holding the access token (kept out of the command line)")
      .option("--webhook-secret-env <variable>", "the environment variable holding the push webhook's secret")
      .action(
        sessionAction("integrations add", async ({ client, flags, json }) => {
          const fromEnv = (flag: string, variable: string | undefined) => {
            if (variable === undefined) return undefined;
            const value = process.env[variable];
            if (!value) throw new UsageError(`${flag} ${variable}: that environment variable is not set`);
            return value;
          };
          const integration = await client.integrations.add({
            name: flags.name,
            base_url: flags.baseUrl,
            token: fromEnv("--token-env", flags.tokenEnv) ?? null,
            webhook_secret: fromEnv("--webhook-secret-env", flags.webhookSecretEnv) ?? null,
          });
          show(integration, json);
          if (!json) note(`Deploy from it: ${cliName()} deploy --repo <url> --integration ${integration.name}`);
        }),
      ),
  );

  program.addCommand(group);
}

function show(integration: GithubIntegration, json: boolean): void {
  if (json) return void printJson(integration);
  printFields([
    ["name", integration.name],
    ["id", integration.id],
    ["base url", integration.base_url],
    ["created", integration.created_at],
  ]);
}
