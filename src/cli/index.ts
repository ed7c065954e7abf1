import { Command, type CommanderError } from "commander";
import { registerAgentCommand } from "./agent.ts";
import { registerUpCommand } from "./up.ts";
import { registerAdminCommand } from "./admin.ts";
import { registerDeployCommand } from "./deploy.ts";
import { registerDeploymentsCommand } from "./deployments.ts";
import { registerRevisionsCommand } from "./revisions.ts";
import { registerLogsCommand } from "./logs.ts";
import { registerListenersCommand } from "./listeners.ts";
import { registerIntegrationsCommand } from "./integrations.ts";
import { registerLoginCommand } from "./login.ts";
import { EXIT } from "./support/exit.ts";
import { SLIPWAY_VERSION } from "../config/version.ts";

/** `slipway <command>`: one file per command under src/cli/. */
const program = new Command().name("slipway").description("Open, self-hostable platform for LangGraph agents").version(SLIPWAY_VERSION);

registerUpCommand(program);
registerAgentCommand(program);
registerAdminCommand(program);
registerDeployCommand(program);
registerDeploymentsCommand(program);
registerRevisionsCommand(program);
registerLogsCommand(program);
registerListenersCommand(program);
registerIntegrationsCommand(program);
registerLoginCommand(program);

// A wrong command line exits 2 (the documented usage error), not commander's 1; help and --version exit 0.
const usageExit = (error: CommanderError) => process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
for (const command of everyCommand(program)) command.exitOverride(usageExit);

await program.parseAsync(process.argv);
