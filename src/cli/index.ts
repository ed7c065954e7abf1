import { Command } from "commander";
import { registerAgentCommand } from "./agent.ts";
import { registerUpCommand } from "./up.ts";
import { registerAdminCommand } from "./admin.ts";

/** `slipway <command>`: one file per command under src/cli/. */
const program = new Command()
  .name("slipway")
  .description("Open, self-hostable platform for LangGraph agents")
  .version("0.1.0");

registerUpCommand(program);
registerAgentCommand(program);
registerAdminCommand(program);

await program.parseAsync(process.argv);
