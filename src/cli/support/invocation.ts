import { basename, isAbsolute, relative } from "node:path";

/**
 * How the user called this CLI, so that a hint ("Wait again: … revisions wait …") can be
 * pasted back as printed. The Quick start runs `node bin/slipway.js`, which puts nothing
 * on the PATH; `npm install -g` and `npm link` do, and `npx slipway` goes through npm.
 */
export function invocation(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const script = argv[1] ?? "";
  // Called through a bin link: on the PATH (npm install -g, npm link), or by npx, which
  // leaves npm_command=exec in the environment (also for every child, hence the link test).
  if (basename(script) === "slipway") return env.npm_command === "exec" ? "npx slipway" : "slipway";
  if (!script) return "slipway";
  const near = relative(cwd, script);
  const path = near && !near.startsWith("..") && !isAbsolute(near) ? near : script;
  return `node ${shellWord(path)}`;
}

/** The command prefix for hints, computed once per process. */
let cached: string | undefined;
export function cliName(): string {
  return (cached ??= invocation());
}

/** A path as one shell word: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
