import { SlipwayError, badRequest } from "../../http/errors.ts";
import { AddressRefused, guardedFetch, type AddressGuardPolicy, type GuardedResponse } from "../../net/address-guard.ts";

/**
 * Lists the repositories a git host exposes to an integration's token.
 *
 * A git host has no standard listing protocol, so this speaks the REST APIs of the
 * common forges and answers an empty list for hosts without one:
 *
 * | base_url                         | asked                                                   |
 * |----------------------------------|---------------------------------------------------------|
 * | https://github.com/              | api.github.com `/user/repos` (needs a token)            |
 * | other http(s) hosts              | Gitea/Forgejo `api/v1`, then GitLab `api/v4`, then GitHub Enterprise `api/v3`; the first that answers JSON wins |
 * | git://, ssh://, or no API found  | nothing: an empty list (the git protocol cannot enumerate repositories; deploy by `repo_url`) |
 *
 * The token is sent only to the integration's own origin (scheme, host and port of its
 * base_url), or for github.com to its REST API's origin, https://api.github.com; every
 * request is checked against that before the header is set. Redirects are not followed.
 * Every request goes through the address guard: a host that is (or now resolves to) a
 * private address the operator has not allowed is a 400, and nothing is sent to it.
 * A host that refuses the token is a 400; an unreachable host a 503.
 */
interface ListedRepository {
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}

export interface ListingOptions {
  timeoutMs?: number;
  maxPages?: number;
}

type Api = "github" | "gitea" | "gitlab";
interface Probe {
  api: Api;
  page: (n: number) => string;
}

export async function listHostRepositories(
  baseUrl: string,
  token: string | undefined,
  guard: AddressGuardPolicy,
  options: ListingOptions = {},
): Promise<ListedRepository[]> {
  const base = new URL(baseUrl);
  if (base.protocol !== "http:" && base.protocol !== "https:") return [];
  const root = base.href.endsWith("/") ? base.href : `${base.href}/`;
  const probes: Probe[] = isGithubDotCom(base)
    ? token
      ? [{ api: "github", page: (n) => `https://api.github.com/user/repos?per_page=100&page=${n}` }]
      : []
    : [
        { api: "gitea", page: (n) => (token ? `${root}api/v1/user/repos?limit=50&page=${n}` : `${root}api/v1/repos/search?limit=50&page=${n}`) },
        { api: "gitlab", page: (n) => `${root}api/v4/projects?${token ? "membership=true&" : ""}per_page=100&page=${n}` },
        { api: "github", page: (n) => `${root}api/v3/${token ? "user/repos" : "repositories"}?per_page=100&page=${n}` },
      ];
  const origins = new Set([base.origin, ...(isGithubDotCom(base) ? ["https://api.github.com"] : [])]);
  const tokenFor = (url: string) => (origins.has(new URL(url).origin) ? token : undefined);
  for (const probe of probes) {
    const first = await fetchPage(probe.page(1), tokenFor(probe.page(1)), guard, options.timeoutMs ?? 5000);
    if (first === undefined) continue; // this API is not served here
    const repos = first.map((item) => toRepository(probe.api, item)).filter((r): r is ListedRepository => r !== undefined);
    for (let n = 2; first.length > 0 && n <= (options.maxPages ?? 10); n++) {
      const page = await fetchPage(probe.page(n), tokenFor(probe.page(n)), guard, options.timeoutMs ?? 5000);
      if (!page || page.length === 0) break;
      repos.push(...page.map((item) => toRepository(probe.api, item)).filter((r): r is ListedRepository => r !== undefined));
    }
    return repos;
  }
  return [];
}

/** One page of results; undefined when the URL is not an API of that kind. */
async function fetchPage(url: string, token: string | undefined, guard: AddressGuardPolicy, timeoutMs: number): Promise<unknown[] | undefined> {
  let response: GuardedResponse;
  try {
    response = await guardedFetch(url, { headers: { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, timeoutMs }, guard);
  } catch (error) {
    if (error instanceof AddressRefused) throw badRequest(`Listing the repositories of ${new URL(url).host} was refused: ${error.message}`);
    const why = (error as Error).name === "TimeoutError" ? "timed out" : "connection failed";
    throw new SlipwayError("unavailable", `git host ${new URL(url).host} is unreachable (${why})`);
  }
  if (response.status === 401 || response.status === 403) {
    throw badRequest(`git host ${new URL(url).host} refused the integration's credentials (HTTP ${response.status})`);
  }
  const type = response.headers.get("content-type") ?? "";
  if (!response.ok || !type.includes("json")) return undefined;
  const body: unknown = await response.json().catch(() => undefined);
  if (Array.isArray(body)) return body;
  // Gitea's search answers {ok, data: [...]}; GitHub's /repositories is a plain array.
  if (body && typeof body === "object" && Array.isArray((body as { data?: unknown }).data)) return (body as { data: unknown[] }).data;
  return undefined;
}

function toRepository(api: Api, item: unknown): ListedRepository | undefined {
  if (!item || typeof item !== "object") return undefined;
  const r = item as Record<string, unknown>;
  const id = typeof r.id === "number" ? r.id : undefined;
  if (id === undefined) return undefined;
  if (api === "gitlab") {
    const namespace = r.namespace as { full_path?: string } | undefined;
    return {
      id,
      name: String(r.path ?? r.name ?? ""),
      owner: String(namespace?.full_path ?? ""),
      url: String(r.http_url_to_repo ?? r.web_url ?? ""),
      default_branch: String(r.default_branch ?? "main"),
    };
  }
  const owner = r.owner as { login?: string; username?: string } | undefined;
  return {
    id,
    name: String(r.name ?? ""),
    owner: String(owner?.login ?? owner?.username ?? ""),
    url: String(r.clone_url ?? r.html_url ?? ""),
    default_branch: String(r.default_branch ?? "main"),
  };
}

function isGithubDotCom(url: URL): boolean {
  return url.hostname === "github.com" || url.hostname === "www.github.com";
}
