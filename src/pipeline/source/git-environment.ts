import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { GitScheme } from "../../net/git-url.ts";

/**
 * What git runs with when the pipeline fetches a repository: nothing of the server user's
 * own setup may change where git connects or what it sends (decision 0032, addendum).
 *
 * - HOME is an empty directory of its own: curl reads `$HOME/.netrc` and would answer a
 *   host's 401 with the credentials it holds for that host; git reads `~/.gitconfig`
 *   (GIT_CONFIG_GLOBAL and GIT_CONFIG_NOSYSTEM also shut out it and /etc/gitconfig).
 * - The environment is built, not inherited: no GIT_* variable (GIT_DIR, GIT_CONFIG_*,
 *   GIT_SSH...) and no proxy variable of the server reaches git; PATH and the ssh agent's
 *   socket are kept.
 * - git runs in that empty directory, with discovery stopped above it
 *   (GIT_CEILING_DIRECTORIES), so no repository's `.git/config` applies to `ls-remote`.
 * - No credential helper and no prompt: a host asking for credentials gets none.
 * - Only the URL's own transport is allowed (redirects are not followed either).
 * - ssh reads no config file (`-F /dev/null`: ProxyCommand, ProxyJump, Include...). It
 *   still uses the server user's keys, `~/.ssh/known_hosts` and agent: ssh finds `~`
 *   through the password database, not HOME.
 */
export interface GitSandbox {
  /** The empty directory git runs in and takes as HOME. */
  dir: string;
  env: NodeJS.ProcessEnv;
  /** `-c` options for every git command. */
  config: string[];
  remove(): void;
}

export function openGitSandbox(scheme: GitScheme, inherited: NodeJS.ProcessEnv = process.env): GitSandbox {
  const dir = mkdtempSync(join(tmpdir(), "slipway-git-"));
  return { dir, ...gitEnvironment(scheme, dir, inherited), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The environment and `-c` options of git for a URL of `scheme`, with `home` as its empty HOME and working directory. */
export function gitEnvironment(scheme: GitScheme, home: string, inherited: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; config: string[] } {
  const env: NodeJS.ProcessEnv = {
    PATH: inherited.PATH,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CEILING_DIRECTORIES: dirname(home),
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: process.platform === "win32" ? "NUL" : "/dev/null",
    GIT_ALLOW_PROTOCOL: scheme,
    LANG: "C",
  };
  if (scheme === "ssh" && inherited.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = inherited.SSH_AUTH_SOCK;
  const config = [
    ["credential.helper", ""],
    ["core.askPass", ""],
    ["protocol.allow", "never"],
    [`protocol.${scheme}.allow`, "always"],
    ["http.followRedirects", "false"],
    ["core.hooksPath", "/dev/null"],
    ["core.fsmonitor", "false"],
  ].flatMap(([key, value]) => ["-c", `${key}=${value}`]);
  return { env, config };
}

/**
 * The ssh command git runs: no config file, no prompt, connecting to the checked address
 * but checking the host key under the host's name (the URL grammar leaves only letters,
 * digits and `. _ - :` in a host: safe in this command line).
 */
export function sshCommand(host: string): string {
  return `ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o HostKeyAlias=${host}`;
}
