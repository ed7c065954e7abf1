import { mkdirSync, rmSync } from "node:fs";
import { AddressRefused, resolveGuarded, type AddressGuardPolicy } from "../../net/address-guard.ts";
import { repoRefProblem, repoUrlProblem } from "../../controlplane/deployments/source-fields.ts";
import { runCommand, type CommandOutcome } from "../build/run-command.ts";
import { StepFailure, commandFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";

/**
 * Fetching a repository at a ref with the system's git, safely:
 * - every value goes to git as an argument after `--`, never through a shell;
 * - only the http(s), git and ssh transports are allowed (no file://, ext::, local paths);
 * - the host is resolved once through the address guard and git is pinned to the checked
 *   address (curl's resolve list for http(s), the address itself for git:// and ssh://),
 *   so a DNS answer cannot change between the check and the connection;
 * - redirects are not followed, no prompt is shown, the user's global git config is not read;
 * - the integration's token goes in a header through git's environment (not the command
 *   line, which other users can read), and only to the integration's own host.
 */
export interface GitSource {
  url: string;
  /** Branch, tag, full ref, or a commit sha. */
  ref: string;
  /** The integration whose host and token the fetch goes through. */
  integration?: { baseUrl: string; token?: string };
}

interface GitContext {
  log: LogWriter;
  signal: AbortSignal;
  gitHosts: AddressGuardPolicy;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;

/** The commit `source.ref` names now (`git ls-remote`), or a CREATE_FAILED that says what exists. */
export async function resolveCommit(source: GitSource, context: GitContext): Promise<string> {
  const target = await gitTarget(source, context);
  if (SHA.test(source.ref)) return source.ref.toLowerCase();
  const lines: string[] = [];
  const outcome = await git(["ls-remote", "--", target.url], target, context, lines);
  if (outcome.code !== 0) {
    throw commandFailure("CREATE_FAILED", "Fetching the source", `git ls-remote ${source.url}`, outcome, context.log.tail(15), accessAdvice(source));
  }
  const refs = new Map<string, string>();
  for (const line of lines) {
    const [sha, name] = line.split("\t");
    if (sha && name) refs.set(name, sha);
  }
  const ref = source.ref;
  const found =
    refs.get(`refs/heads/${ref}`) ?? refs.get(`refs/tags/${ref}^{}`) ?? refs.get(`refs/tags/${ref}`) ?? refs.get(`${ref}^{}`) ?? refs.get(ref);
  if (!found) {
    const branches = [...refs.keys()].filter((name) => name.startsWith("refs/heads/")).map((name) => name.slice(11));
    throw new StepFailure(
      "CREATE_FAILED",
      `Fetching the source failed: ref '${ref}' was not found in ${source.url}. ` +
        (branches.length ? `Its branches are: ${branches.slice(0, 20).join(", ")}.` : "It has no branches.") +
        " Set source_revision_config.repo_ref to one of them, a tag, or a commit sha.",
    );
  }
  return found;
}

/** Checks `commit` of the repository out into `dir` (created; no .git left behind). */
export async function fetchCommit(source: GitSource, commit: string, dir: string, context: GitContext): Promise<void> {
  const target = await gitTarget(source, context);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const step = async (args: string[], shown: string) => {
    const outcome = await git(["-C", dir, ...args], target, context);
    if (outcome.code !== 0) throw commandFailure("CREATE_FAILED", "Fetching the source", shown, outcome, context.log.tail(15), accessAdvice(source));
  };
  await step(["init", "-q"], "git init");
  // The commit alone when the server allows it (one shallow round); else the ref, whose
  // tip is checked, and as a last resort every branch and tag.
  let fetched = await git(["-C", dir, "fetch", "-q", "--depth", "1", "--no-tags", "--", target.url, commit], target, context);
  if (fetched.code !== 0 && !SHA.test(source.ref)) {
    fetched = await git(["-C", dir, "fetch", "-q", "--no-tags", "--", target.url, source.ref], target, context);
  }
  if (fetched.code !== 0) {
    fetched = await git(["-C", dir, "fetch", "-q", "--", target.url, "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"], target, context);
  }
  if (fetched.code !== 0) {
    throw commandFailure("CREATE_FAILED", "Fetching the source", `git fetch ${source.url} ${commit}`, fetched, context.log.tail(15), accessAdvice(source));
  }
  const checkout = await git(["-C", dir, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], target, context);
  if (checkout.code !== 0) {
    throw new StepFailure(
      "CREATE_FAILED",
      `Fetching the source failed: commit ${commit} is not in ${source.url} any more (a force-push?). ` +
        "Patch the deployment with a repo_ref that exists to build again.",
    );
  }
  rmSync(`${dir}/.git`, { recursive: true, force: true });
}

interface Target {
  /** The URL git is given: the checked address for git:// and ssh://. */
  url: string;
  env: NodeJS.ProcessEnv;
  config: string[];
}

async function gitTarget(source: GitSource, context: GitContext): Promise<Target> {
  const problem = repoUrlProblem(source.url) ?? repoRefProblem(source.ref);
  if (problem) throw new StepFailure("CREATE_FAILED", `Fetching the source was refused: ${problem}`);
  const url = parseRepoUrl(source.url);
  if (source.integration) {
    const base = new URL(source.integration.baseUrl);
    if (base.hostname.toLowerCase() !== url.hostname.toLowerCase()) {
      throw new StepFailure(
        "CREATE_FAILED",
        `Fetching the source was refused: repo_url's host ${url.hostname} is not the integration's host ${base.hostname}; ` +
          "the integration's token is only sent to its own host. Use an integration for that host, or none for a public repository.",
      );
    }
  }
  let addresses: { address: string; family: 4 | 6 }[];
  try {
    addresses = await resolveGuarded(url.hostname.replace(/^\[|\]$/g, ""), context.gitHosts);
  } catch (error) {
    if (error instanceof AddressRefused) throw new StepFailure("CREATE_FAILED", `Fetching the source was refused: ${error.message}`);
    throw new StepFailure("CREATE_FAILED", `Fetching the source failed: cannot resolve ${url.hostname} (${(error as Error).message}).`);
  }
  const first = addresses[0];
  const literal = first.family === 6 ? `[${first.address}]` : first.address;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "echo",
    SSH_ASKPASS: "echo",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: process.platform === "win32" ? "NUL" : "/dev/null",
    GIT_ALLOW_PROTOCOL: "http:https:git:ssh",
    LANG: "C",
  };
  const config = ["-c", "protocol.file.allow=never", "-c", "http.followRedirects=false", "-c", "core.hooksPath=/dev/null"];
  let gitUrl = source.url;
  if (url.protocol === "http:" || url.protocol === "https:") {
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    config.push("-c", `http.curloptResolve=${url.hostname.replace(/^\[|\]$/g, "")}:${port}:${first.address}`);
    const token = source.integration?.token;
    if (token) {
      // GIT_CONFIG_COUNT keeps the header out of the process list.
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraHeader";
      env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
    }
  } else if (url.protocol === "git:") {
    gitUrl = withHost(url, literal);
  } else {
    // ssh: connect to the checked address, but check the host key under the host's name.
    gitUrl = withHost(url, literal);
    env.GIT_SSH_COMMAND = `ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o HostKeyAlias=${hostKeyAlias(url.hostname)}`;
    env.SSH_AUTH_SOCK = process.env.SSH_AUTH_SOCK;
  }
  return { url: gitUrl, env, config };
}

function git(args: string[], target: Target, context: GitContext, lines?: string[]): Promise<CommandOutcome> {
  // ls-remote's answer is data, not log: collect its stdout instead of logging it.
  const output = (line: string, stream: "stdout" | "stderr") =>
    lines && stream === "stdout" ? lines.push(line) : context.log.info(line);
  return runCommand("git", [...target.config, ...args], { cwd: process.cwd(), env: target.env, output, signal: context.signal, timeoutMs: 10 * 60_000 });
}

/** An ssh or scp-like (`git@host:owner/repo`) URL as a URL object; http(s) and git:// as they are. */
function parseRepoUrl(raw: string): URL {
  const scp = /^([A-Za-z0-9._~-]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(raw);
  return new URL(scp ? `ssh://${scp[1] ?? ""}${scp[2]}/${scp[3]}` : raw);
}

function withHost(url: URL, host: string): string {
  const copy = new URL(url.href);
  copy.hostname = host;
  return copy.href;
}

/** Host names only (letters, digits, dots, dashes): it goes into the ssh command line. */
function hostKeyAlias(host: string): string {
  const plain = host.replace(/^\[|\]$/g, "");
  if (!/^[A-Za-z0-9.:-]+$/.test(plain)) throw new StepFailure("CREATE_FAILED", `Fetching the source was refused: '${host}' is not a host name.`);
  return plain;
}

function accessAdvice(source: GitSource): string {
  return source.integration?.token
    ? "Check that the repository exists and that the integration's token may read it."
    : "Check that the repository exists and is public, or give the deployment an integration with a token that may read it.";
}
