import type { Command } from "commander";

/** `slipway up`: the control plane. (Being built in the control-plane issue.) */
export function registerUpCommand(program: Command): void {
  program
    .command("up")
    .description("Serve the control plane")
    .action(() => {
      console.error("slipway up: not built yet");
      process.exitCode = 1;
    });
}
