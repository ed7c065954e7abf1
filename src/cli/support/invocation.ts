import { basename, isAbsolute, relative } from "node:path";

/**
 * How the user called this CLI, so that a hint ("Wait again: … revisions wait …") can be
 * pasted back as printed. The Quick start runs `node bin/slipway.js`, which puts nothing
 * on the PATH; `npm install -g` and `npm link` do, and `npx slipway` goes through npm.
 */
export function invocation(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const script = argv[1] ?? "";
  // npx (npm exec) runs the package's bin from node_modules/.bin or its own cache.
  if (env.npm_command === "exec") return "npx slipway";
  // On the PATH, or called through a bin link: the name alone.
  if (basename(script) === "slipway") return "slipway";
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
