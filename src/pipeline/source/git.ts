import { mkdirSync, rmSync } from "node:fs";
import { AddressRefused, canonicalIp, resolveGuarded, type AddressGuardPolicy } from "../../net/address-guard.ts";
import { DEFAULT_PORTS, baseUrlOrigin, gitOrigin, gitUrlText, readGitUrl, type GitUrl } from "../../net/git-url.ts";
import { repoRefProblem } from "../../controlplane/deployments/source-fields.ts";
import { runCommand, type CommandOutcome } from "../builder/run-command.ts";
import { openGitSandbox, sshCommand, type GitSandbox } from "./git-environment.ts";
import { StepFailure, commandFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";

/**
 * Fetching a repository at a ref with the system's git, safely:
 * - every value goes to git as an argument after `--`, never through a shell;
 * - the URL is read once into its canonical form (src/net/git-url.ts): a URL that git or
 *   curl could read differently from the guard is refused, and git is given the canonical
 *   text only; only the http(s), git and ssh transports (no file://, ext::, local paths);
 * - the host is resolved once through the address guard and git is pinned to the checked
 *   address (curl's resolve list for http(s), the address itself for git://, ssh:// and
 *   scp-like), so a DNS answer cannot change between the check and the connection;
 * - git runs in an empty directory with an empty HOME and an environment of its own
 *   (./git-environment.ts): the server user's git config, .netrc and ssh config do not
 *   apply; redirects are not followed, no prompt is shown, no credential helper asked;
 * - the integration's token goes in a header through git's environment (not the command
 *   line, which other users can read), and only to the integration's own origin (scheme,
 *   host and port of its base_url); a repository of another host is refused.
 */
export interface GitSource {
  url: string;
  /** Branch, tag, full ref, or a commit sha. */
  ref: string;
  /** The integration whose host and token the fetch goes through. */
  integration?: { baseUrl: string; token?: string };
}

interface GitContext {
  /** Where git's output goes: the revision's build log. */
  log: Pick<LogWriter, "info" | "tail">;
  signal: AbortSignal;
  gitHosts: AddressGuardPolicy;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;

/** The commit `source.ref` names now (`git ls-remote`), or a CREATE_FAILED that says what exists. */
export async function resolveCommit(source: GitSource, context: GitContext): Promise<string> {
  const target = await gitTarget(source, context);
  try {
    return await lsRemote(source, target, context);
  } finally {
    target.remove();
  }
}

async function lsRemote(source: GitSource, target: Target, context: GitContext): Promise<string> {
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
  const found = refs.get(`refs/heads/${ref}`) ?? refs.get(`refs/tags/${ref}^{}`) ?? refs.get(`refs/tags/${ref}`) ?? refs.get(`${ref}^{}`) ?? refs.get(ref);
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
  try {
    await checkOut(source, commit, dir, target, context);
  } finally {
    target.remove();
  }
}

async function checkOut(source: GitSource, commit: string, dir: string, target: Target, context: GitContext): Promise<void> {
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

interface Target extends GitSandbox {
  /** The URL git is given: the checked address for git:// and ssh://. */
  url: string;
}

async function gitTarget(source: GitSource, context: GitContext): Promise<Target> {
  const read = readGitUrl(source.url);
  const problem = read.problem ?? repoRefProblem(source.ref);
  if (problem || !read.url) throw new StepFailure("CREATE_FAILED", `Fetching the source was refused: ${problem}`);
  const url = read.url;
  if (source.integration) checkIntegrationHost(url, source.integration.baseUrl);
  let addresses: { address: string; family: 4 | 6 }[];
  try {
    addresses = await resolveGuarded(url.host, context.gitHosts);
  } catch (error) {
    if (error instanceof AddressRefused) throw new StepFailure("CREATE_FAILED", `Fetching the source was refused: ${error.message}`);
    throw new StepFailure("CREATE_FAILED", `Fetching the source failed: cannot resolve ${url.host} (${(error as Error).message}).`);
  }
  const address = addresses[0].address;
  const sandbox = openGitSandbox(url.scheme);
  const { env, config } = sandbox;
  // git is given the canonical text only (never the text as written), pinned to the checked address.
  let gitUrl: string;
  if (url.scheme === "http" || url.scheme === "https") {
    // curl keeps the name (TLS checks the certificate against it) and connects to the address.
    gitUrl = url.href;
    if (url.host !== address) {
      const shown = address.includes(":") ? `[${address}]` : address;
      config.push("-c", `http.curloptResolve=${url.host}:${url.port ?? DEFAULT_PORTS[url.scheme]}:${shown}`);
    }
    const token = source.integration?.token;
    if (token && gitOrigin(url) === baseUrlOrigin(source.integration!.baseUrl)) {
      // GIT_CONFIG_COUNT keeps the header out of the process list.
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraHeader";
      env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
    } else if (token) {
      context.log.info(
        `The integration's token is not sent: it belongs to ${baseUrlOrigin(source.integration!.baseUrl)}, and ${source.url} is ${gitOrigin(url)}.`,
      );
    }
  } else if (url.scheme === "git") {
    gitUrl = gitUrlText(url, address);
  } else {
    // ssh: connect to the checked address, but check the host key under the host's name.
    gitUrl = gitUrlText(url, address);
    env.GIT_SSH_COMMAND = sshCommand(url.host);
  }
  return { ...sandbox, url: gitUrl };
}

/** A repository of another host than the integration's is refused: the integration was named for its host. */
function checkIntegrationHost(url: GitUrl, baseUrl: string): void {
  const base = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, "$1");
  const baseHost = canonicalIp(base)?.address ?? base.toLowerCase();
  if (baseHost !== url.host) {
    throw new StepFailure(
      "CREATE_FAILED",
      `Fetching the source was refused: repo_url's host ${url.host} is not the integration's host ${baseHost}; ` +
        "the integration's token is only sent to its own origin. Use an integration for that host, or none for a public repository.",
    );
  }
}

function git(args: string[], target: Target, context: GitContext, lines?: string[]): Promise<CommandOutcome> {
  // ls-remote's answer is data, not log: collect its stdout instead of logging it.
  const output = (line: string, stream: "stdout" | "stderr") => (lines && stream === "stdout" ? lines.push(line) : context.log.info(line));
  return runCommand("git", [...target.config, ...args], { cwd: target.dir, env: target.env, output, signal: context.signal, timeoutMs: 10 * 60_000 });
}

function accessAdvice(source: GitSource): string {
  return source.integration?.token
    ? "Check that the repository exists and that the integration's token may read it."
    : "Check that the repository exists and is public, or give the deployment an integration with a token that may read it.";
}
