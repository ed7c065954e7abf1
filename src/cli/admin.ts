import type { Command } from "commander";

/** `slipway admin ...`: organisation bootstrap and other offline tasks. */
export function registerAdminCommand(program: Command): void {
  program.command("admin").description("Administrative tasks");
}
