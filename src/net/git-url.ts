import { canonicalIp } from "./ip-ranges.ts";

/**
 * A repository URL read once, into the one form every reader agrees on (decision 0032).
 *
 * The address guard, the WHATWG URL parser, git and curl each parse URLs their own way:
 * `http://allowed\@internal/x.git` is host `allowed` to WHATWG (`\` is `/` there) and host
 * `internal` to curl (`\` is part of the user name). Whatever the guard checked must be
 * what git connects to, so a URL is accepted only when it is written in a strict grammar
 * that all of them read alike, and git is handed the canonical text built from that
 * reading, never the text as given:
 *
 * - `http`, `https`, `git` and `ssh` URLs (`scheme://[user@]host[:port]/path`, a user
 *   only for ssh), and git's scp-like `[user@]host:path` (ssh);
 * - a host is a DNS name, a dotted-quad IPv4 address or a bracketed IPv6 address;
 * - a path is letters, digits and `/ . _ ~ + -`, and percent-encoded non-ASCII bytes;
 * - nothing else: no backslash, whitespace, control character, query, fragment, password,
 *   second `@`, percent-encoded ASCII (`%2F`, `%40`, `%5C`), `.`/`..` segment, or another
 *   spelling of an IPv4 address (`2130706433`, `127.1`);
 * - `file://` and local paths are refused: they read this server's files, and no
 *   address can be checked for them.
 *
 * Letter case of the scheme and host, a default port written out, and an IPv6 address
 * in a longer spelling are the only differences from the canonical text accepted: no
 * reader can take them for anything else.
 */
export type GitScheme = "http" | "https" | "git" | "ssh";

export interface GitUrl {
  /** `url`: scheme://...; `scp`: git's scp-like `[user@]host:path`, over ssh. */
  form: "url" | "scp";
  scheme: GitScheme;
  /** The ssh account (ssh only). */
  user?: string;
  /** Lower-case name, dotted-quad IPv4, or IPv6 in canonical text without brackets. */
  host: string;
  /** The port written in the URL; undefined means the scheme's default. */
  port?: number;
  /** From the first `/` (url form), or what follows the `:` (scp form). */
  path: string;
  /** The canonical text. */
  href: string;
}

export const DEFAULT_PORTS: Record<GitScheme, number> = { http: 80, https: 443, git: 9418, ssh: 22 };

export type GitUrlReading = { url: GitUrl; problem?: undefined } | { url?: undefined; problem: string };

const MAX_LENGTH = 2048;
const SCHEMES = new Set<string>(["http", "https", "git", "ssh"]);
const SSH_USER = /^[a-z0-9_][a-z0-9_.-]*$/i;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
/** One path segment: plain characters, and percent-encoded bytes of non-ASCII text. */
const SEGMENT = /^(?:[A-Za-z0-9._~+-]|%[89A-Fa-f][0-9A-Fa-f])+$/;
const HOST_RULE = "repo_url's host must be a host name (letters, digits, '.', '-', '_'), an IPv4 address or a bracketed IPv6 address";
const PATH_RULE = "repo_url's path may hold letters, digits, '/', '.', '_', '~', '+' and '-' only (percent-encode non-ASCII characters)";

/** Reads `raw` as a repository URL, or says why it is refused. */
export function readGitUrl(raw: string): GitUrlReading {
  const problem = textProblem(raw);
  if (problem) return { problem };
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  if (scheme) return readUrlForm(scheme[1].toLowerCase(), raw.slice(scheme[0].length), raw);
  if (/^[a-z][a-z0-9+.-]*::/i.test(raw)) return { problem: "repo_url must not use git's remote-helper syntax (transport::address)" };
  const scp = /^(?:([^@/:]*)@)?(\[[^\]/]*\]|[^@/:[\]]+):(.*)$/.exec(raw);
  if (scp) return readScpForm(scp[1], scp[2], scp[3]);
  return { problem: "repo_url must be an https://, http://, git:// or ssh:// URL, or user@host:owner/repo (file:// URLs and local paths are refused)" };
}

/** What no form may hold, whatever the parser: these are where readers part ways. */
function textProblem(raw: string): string | undefined {
  if (raw.length === 0) return "repo_url must not be empty";
  if (raw.length > MAX_LENGTH) return `repo_url must be at most ${MAX_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f]/.test(raw) || /%(?:[01][0-9a-f]|7f)/i.test(raw)) return "repo_url must not contain control characters";
  if (/\s/.test(raw)) return "repo_url must not contain spaces";
  if (/[^\u0020-\u007e]/.test(raw)) return "repo_url must be ASCII: write a host name in its xn-- form and percent-encode other characters of the path";
  if (raw.startsWith("-")) return "repo_url must not start with '-' (git would read it as an option)";
  if (raw.includes("\\")) {
    return "repo_url must not contain '\\': URL parsers read it as '/', git and curl as part of a user name, so they would not agree on the host";
  }
  if (/%[0-7][0-9a-f]/i.test(raw)) {
    return "repo_url must not percent-encode ASCII characters (such as %2F, %40, %5C): write them as they are; readers decode them at different points";
  }
  if (/[?#]/.test(raw)) return "repo_url must not have a query or a fragment ('?', '#')";
  return undefined;
}

/**
 * Reads an integration's `base_url` by the same grammar (decision 0032, addendum): its
 * origin is what a token is bound to and a repository's host is compared with, so every
 * reader must agree on it too. Only the URL form; the path may be empty. Problems name
 * `base_url`.
 */
export function readBaseUrl(raw: string): GitUrlReading {
  const problem = textProblem(raw);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  const read: GitUrlReading = problem
    ? { problem }
    : scheme
      ? readUrlForm(scheme[1].toLowerCase(), raw.slice(scheme[0].length), raw, { pathOptional: true })
      : { problem: "repo_url must be an https://, http://, git:// or ssh:// URL" };
  return read.problem ? { problem: read.problem.replaceAll("repo_url", "base_url") } : read;
}

function readUrlForm(scheme: string, rest: string, raw: string, options: { pathOptional?: boolean } = {}): GitUrlReading {
  if (!SCHEMES.has(scheme)) {
    const why = scheme === "file" ? " (a file:// URL reads this server's own files)" : "";
    return { problem: `repo_url must use https, http, git or ssh, not ${scheme.slice(0, 20)}${why}` };
  }
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  // A base URL without a path is its root, as WHATWG reads it.
  const path = slash === -1 ? (options.pathOptional ? "/" : "") : rest.slice(slash);
  const at = authority.split("@");
  if (at.length > 2) return { problem: "repo_url must not contain more than one '@' before its path" };
  let user: string | undefined;
  if (at.length === 2) {
    if (at[0].includes(":")) return { problem: "repo_url must not carry a password: give the integration a token instead" };
    // ssh://git@host/... names the account to log in as; on http(s) and git:// a user is a credential.
    if (scheme !== "ssh") return { problem: "repo_url must not carry credentials or a user name: give the integration a token instead" };
    if (!SSH_USER.test(at[0])) return { problem: "repo_url's user name must be letters, digits, '.', '_' or '-', not starting with '-'" };
    user = at[0];
  }
  const hostPort = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(at[at.length - 1]);
  if (!hostPort) return { problem: HOST_RULE };
  const host = readHost(hostPort[1]);
  if (typeof host !== "string") return host;
  let port: number | undefined;
  if (hostPort[2] !== undefined) {
    if (!/^[1-9][0-9]{0,4}$/.test(hostPort[2]) || Number(hostPort[2]) > 65535) {
      return { problem: "repo_url's port must be a number from 1 to 65535, without leading zeros" };
    }
    port = Number(hostPort[2]);
  }
  const pathProblem = options.pathOptional && path === "/" ? undefined : urlPathProblem(path);
  if (pathProblem) return { problem: pathProblem };
  const url: GitUrl = { form: "url", scheme: scheme as GitScheme, user, host, port, path, href: "" };
  url.href = gitUrlText(url, host);
  const disagreement = whatwgDisagreement(url, raw);
  return disagreement ? { problem: disagreement } : { url };
}

function readScpForm(user: string | undefined, hostText: string, path: string): GitUrlReading {
  if (user !== undefined && !SSH_USER.test(user)) return { problem: "repo_url's user name must be letters, digits, '.', '_' or '-', not starting with '-'" };
  if (user === undefined && /^(?:https?|git|ssh|file)$/i.test(hostText))
    return { problem: "repo_url looks like a URL without its '//': write scheme://host/path" };
  const host = readHost(hostText);
  if (typeof host !== "string") return host;
  if (path === "" || path.startsWith("-")) return { problem: "repo_url's path must not be empty or start with '-'" };
  const segments = path.split("/");
  if (segments.some((s) => s === "." || s === "..")) return { problem: "repo_url's path must not contain '.' or '..' segments" };
  if (segments.slice(1, -1).includes("") || !segments.every((s, i) => (s === "" ? i === 0 || i === segments.length - 1 : SEGMENT.test(s)))) {
    return { problem: PATH_RULE };
  }
  const url: GitUrl = { form: "scp", scheme: "ssh", user, host, path, href: "" };
  url.href = gitUrlText(url, host);
  return { url };
}

/** A host in its canonical text (lower case, IPv6 without brackets), or why it is refused. */
function readHost(text: string): string | { problem: string } {
  if (text === "") return { problem: "repo_url must name a host" };
  if (text.startsWith("[")) {
    const inner = text.slice(1, -1);
    const ip = /^[0-9a-f:.]+$/i.test(inner) ? canonicalIp(inner) : undefined;
    return ip?.family === 6 ? ip.address : { problem: `${HOST_RULE}; '${text.slice(0, 60)}' is not an IPv6 address` };
  }
  const host = text.toLowerCase();
  if (host.startsWith("-")) return { problem: `${HOST_RULE}, not starting with '-'` };
  const ip = canonicalIp(host);
  if (ip)
    return ip.family === 4 && ip.address === host
      ? host
      : { problem: `repo_url's host must spell the address as ${ip.family === 6 ? `[${ip.address}]` : ip.address}` };
  const labels = host.split(".");
  if (host.length > 253 || !labels.every((l) => l.length <= 63 && LABEL.test(l))) return { problem: HOST_RULE };
  // A name ending in a number is an IPv4 address to URL parsers, and an error or a name to others.
  if (/^[0-9]+$/.test(labels[labels.length - 1]) || /^0x[0-9a-f]*$/.test(labels[labels.length - 1])) return { problem: HOST_RULE };
  return host;
}

function urlPathProblem(path: string): string | undefined {
  if (path === "" || path === "/") return "repo_url must name a repository: a path after the host";
  const segments = path.slice(1).split("/");
  if (segments.some((s) => s === "." || s === "..")) return "repo_url's path must not contain '.' or '..' segments";
  // A trailing slash is allowed; an empty segment elsewhere ('//') is not.
  if (segments.slice(0, -1).includes("") || !segments.every((s, i) => (s === "" ? i === segments.length - 1 : SEGMENT.test(s)))) return PATH_RULE;
  return undefined;
}

/**
 * The WHATWG parser's reading of the text given must be ours: a second reader, so that a
 * gap in the grammar above shows as a refusal and not as a host nobody checked. (It does
 * not apply to the scp form, which is not a URL to it.)
 */
function whatwgDisagreement(url: GitUrl, raw: string): string | undefined {
  let theirs: URL;
  try {
    theirs = new URL(raw);
  } catch {
    return "repo_url is not a valid URL";
  }
  const host = canonicalIp(theirs.hostname)?.address ?? theirs.hostname.toLowerCase();
  const port = theirs.port ? Number(theirs.port) : DEFAULT_PORTS[url.scheme];
  const agrees =
    theirs.protocol === `${url.scheme}:` &&
    decodeURIComponent(theirs.username) === (url.user ?? "") &&
    theirs.password === "" &&
    host === url.host &&
    port === (url.port ?? DEFAULT_PORTS[url.scheme]) &&
    // A non-special scheme's empty path is its root (a base_url only: a repo_url needs a path).
    (theirs.pathname || "/") === url.path &&
    theirs.search === "" &&
    theirs.hash === "";
  return agrees ? undefined : "repo_url is read differently by different URL parsers: write it as scheme://host[:port]/path";
}

/** The text git is given: `url` with its host replaced by `host` (a name, or the checked address). */
export function gitUrlText(url: GitUrl, host: string): string {
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const user = url.user !== undefined ? `${url.user}@` : "";
  if (url.form === "scp") return `${user}${shownHost}:${url.path}`;
  return `${url.scheme}://${user}${shownHost}${url.port !== undefined ? `:${url.port}` : ""}${url.path}`;
}

/** `scheme://host:port` with the port always written: what an integration's token is bound to. */
export function gitOrigin(url: GitUrl): string {
  return `${url.scheme}://${url.host.includes(":") ? `[${url.host}]` : url.host}:${url.port ?? DEFAULT_PORTS[url.scheme]}`;
}

/** The origin of an integration's `base_url` in the same form as `gitOrigin`, or undefined. */
export function baseUrlOrigin(baseUrl: string): string | undefined {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    return undefined;
  }
  const scheme = base.protocol.slice(0, -1);
  if (!SCHEMES.has(scheme)) return undefined;
  const plain = base.hostname.replace(/^\[(.*)\]$/, "$1");
  const host = canonicalIp(plain)?.address ?? plain.toLowerCase();
  const port = base.port ? Number(base.port) : DEFAULT_PORTS[scheme as GitScheme];
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
