/**
 * The git-looking fields of a deployment, checked before they are stored and again before
 * git sees them (the pipeline). Each function answers why a value is refused, or undefined.
 *
 * What they guard against: values git would read as options (`--upload-pack=...`,
 * `ssh://-oProxyCommand=...`), transports that run commands or read local files
 * (`ext::sh -c ...`, `file:///etc/passwd`, plain paths), control characters that split a
 * log line or a config value, credentials that would be stored and shown in clear, and
 * paths that leave the repository (`../`).
 */

import { readGitUrl } from "../../net/git-url.ts";

const CONTROL = /[\u0000-\u001f\u007f]/;
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/**
 * `repo_url`: an http(s)://, git:// or ssh:// URL, or scp-like `user@host:owner/repo`, in
 * the strict form every URL reader agrees on (src/net/git-url.ts, decision 0032).
 * No credentials (give the integration a token), no options, no other transports.
 */
export function repoUrlProblem(url: string): string | undefined {
  return readGitUrl(url).problem;
}

/**
 * `repo_ref`: a branch, a tag, a full ref or a full commit sha, by git's check-ref-format
 * rules (https://git-scm.com/docs/git-check-ref-format), and not starting with '-'.
 */
export function repoRefProblem(ref: string): string | undefined {
  if (ref.length === 0) return "repo_ref must not be empty";
  if (FULL_SHA.test(ref)) return undefined;
  if (ref.startsWith("-")) return "repo_ref must not start with '-' (git would read it as an option)";
  if (CONTROL.test(ref)) return "repo_ref must not contain control characters";
  if (/[\s~^:?*[\\]/.test(ref)) return "repo_ref must not contain spaces or any of ~ ^ : ? * [ \\";
  if (ref.includes("..")) return "repo_ref must not contain '..'";
  if (ref.includes("@{") || ref === "@") return "repo_ref must not contain '@{' or be '@'";
  if (ref.startsWith("/") || ref.endsWith("/") || ref.includes("//")) return "repo_ref must not start or end with '/' or contain '//'";
  if (ref.endsWith(".")) return "repo_ref must not end with '.'";
  for (const part of ref.split("/")) {
    if (part.startsWith(".")) return "no part of repo_ref may start with '.'";
    if (part.endsWith(".lock")) return "no part of repo_ref may end with '.lock'";
  }
  return undefined;
}

/** `langgraph_config_path`: a relative path inside the repository, with forward slashes. */
export function configPathProblem(path: string): string | undefined {
  if (path.length === 0) return "langgraph_config_path must not be empty";
  if (CONTROL.test(path)) return "langgraph_config_path must not contain control characters";
  if (path.includes("\\")) return "langgraph_config_path must use '/' between directories, not '\\'";
  if (path.startsWith("/") || /^[a-z]:/i.test(path)) return "langgraph_config_path must be relative to the repository's root, not absolute";
  if (path.split("/").includes("..")) return "langgraph_config_path must not contain '..': it must stay inside the repository";
  return undefined;
}
