import { Command, type Option } from "commander";
import { registerAgentCommand } from "./agent.ts";
import { registerUpCommand } from "./up.ts";

/**
 * The flags of `slipway up` and `slipway agent` as Markdown tables, read from the
 * commands themselves: docs/configuration.md carries this text, and a test keeps the
 * two equal (`npm run docs:config` rewrites it).
 */
export function flagTables(): string {
  const program = new Command();
  registerUpCommand(program);
  registerAgentCommand(program);
  return program.commands
    .map((command) => [`### \`slipway ${command.name()}\``, "", "| flag | meaning | default |", "|---|---|---|", ...command.options.map(row), ""].join("\n"))
    .join("\n");
}

function row(option: Option): string {
  const value = option.negate ? undefined : option.defaultValue;
  const fallback = value === undefined || (Array.isArray(value) && value.length === 0) ? "" : `\`${String(value)}\``;
  return `| \`${option.flags}\` | ${cell(option.description)} | ${fallback} |`;
}

/** Table cells: a pipe would end the cell. */
const cell = (text: string) => text.replace(/\|/g, "\\|");
/** The part of a document between the generated-block markers. */
export const GENERATED_START = "<!-- generated: npm run docs:config -->";
export const GENERATED_END = "<!-- end of generated part -->";

export function generatedBlock(document: string): string {
  const start = document.indexOf(GENERATED_START);
  const end = document.indexOf(GENERATED_END);
  if (start < 0 || end < start) throw new Error("the document has no generated block");
  return document.slice(start + GENERATED_START.length, end).trim();
}

export function replaceGenerated(document: string, content: string): string {
  const start = document.indexOf(GENERATED_START);
  const end = document.indexOf(GENERATED_END);
  if (start < 0 || end < start) throw new Error("the document has no generated block");
  return `${document.slice(0, start + GENERATED_START.length)}\n\n${content.trim()}\n\n${document.slice(end)}`;
}
