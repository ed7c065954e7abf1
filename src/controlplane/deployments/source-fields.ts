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

const CONTROL = /[\u0000-\u001f\u007f]/;
/** Percent-encoded control characters, which git decodes in some URL forms. */
const ENCODED_CONTROL = /%(?:[01][0-9a-f]|7f)/i;
const SCHEMES = new Set(["http:", "https:", "git:", "ssh:"]);
/** A DNS name or IPv4 literal (no leading '-', no '%'), or a bracketed IPv6 literal. */
const HOST = /^(?:[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\])$/i;
const SSH_USER = /^[a-z0-9_][a-z0-9_.-]*$/i;
/** `user@host:path`, git's scp-like syntax (only when no `://` and no slash before the colon). */
const SCP_LIKE = /^(?:([^@/:]*)@)?([^@/:]+):(.*)$/;
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/**
 * `repo_url`: an http(s)://, git:// or ssh:// URL, or scp-like `user@host:owner/repo`.
 * No credentials (give the integration a token), no options, no other transports.
 */
export function repoUrlProblem(url: string): string | undefined {
  if (url.length === 0) return "repo_url must not be empty";
  if (CONTROL.test(url) || ENCODED_CONTROL.test(url)) return "repo_url must not contain control characters";
  if (/\s/.test(url)) return "repo_url must not contain spaces";
  if (url.startsWith("-")) return "repo_url must not start with '-' (git would read it as an option)";
  if (/^[a-z][a-z0-9+.-]*::/i.test(url)) return "repo_url must not use git's remote-helper syntax (transport::address)";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return urlFormProblem(url);
  const scp = SCP_LIKE.exec(url);
  if (scp && !url.includes("://")) return scpProblem(scp[1], scp[2], scp[3]);
  return "repo_url must be an https://, http://, git:// or ssh:// URL, or user@host:owner/repo";
}

function urlFormProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "repo_url is not a valid URL";
  }
  if (!SCHEMES.has(url.protocol)) return `repo_url must use https, http, git or ssh, not ${url.protocol.slice(0, -1).slice(0, 20)}`;
  if (!url.hostname) return "repo_url must name a host";
  if (!HOST.test(url.hostname)) return "repo_url's host must be a host name or an IP address (letters, digits, '.', '-', not starting with '-')";
  if (url.password) return "repo_url must not carry a password: give the integration a token instead";
  if (url.username) {
    // ssh://git@host/... names the account to log in as; on http(s) a user is a credential.
    if (url.protocol !== "ssh:") return "repo_url must not carry credentials: give the integration a token instead";
    if (!SSH_USER.test(decoded(url.username))) return "repo_url's user name must be letters, digits, '.', '_' or '-', not starting with '-'";
  }
  // The raw text: the URL parser has already folded `..` away, git and ssh may not.
  if (decoded(raw).split(/[/?#]/).includes("..")) return "repo_url's path must not contain '..'";
  return undefined;
}

/** Percent-decoded; a malformed escape stays as it is (git passes it on undecoded too). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function scpProblem(user: string | undefined, host: string, path: string): string | undefined {
  if (user !== undefined && !SSH_USER.test(user)) return "repo_url's user name must be letters, digits, '.', '_' or '-', not starting with '-'";
  if (!HOST.test(host)) return "repo_url's host must be a host name or an IP address (letters, digits, '.', '-', not starting with '-')";
  if (path === "" || path.startsWith("-")) return "repo_url's path must not be empty or start with '-'";
  if (path.split("/").includes("..")) return "repo_url's path must not contain '..'";
  return undefined;
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
