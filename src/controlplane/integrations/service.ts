import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import { GIT_HOSTS_SETTING } from "../../config/controlplane.ts";
import { conflict, invalidField, notFound } from "../../http/errors.ts";
import { AddressRefused, resolveGuarded, type AddressGuardPolicy } from "../../net/address-guard.ts";
import { readBaseUrl } from "../../net/git-url.ts";
import type { ControlPlaneDeps } from "../context.ts";
import { listHostRepositories, type ListingOptions } from "./repo-listing.ts";
import * as repo from "./repository.ts";
import type { GithubIntegration, GithubRepository, InstallIntegrationRequest } from "./schemas.ts";

/** What integrations need of the control plane (the pipeline's deps have it too). */
export type IntegrationServiceDeps = Pick<ControlPlaneDeps, "db" | "secretsKey" | "now" | "newId" | "gitHosts"> & {
  /** Limits of a host's repository listing (timeout, pages); the listing's defaults without it. */
  listing?: ListingOptions;
};

/** What the pipeline needs to fetch a repository of an integration. */
interface IntegrationCredentials {
  id: string;
  provider: "github" | "git";
  baseUrl: string;
  token?: string;
  webhookSecret?: string;
}

const SCHEMES = new Set(["https:", "http:", "git:", "ssh:"]);

/** Named in refusals when the caller gave no policy of its own. */
const DEFAULT_GIT_HOSTS: AddressGuardPolicy = { allowHosts: [], allowSetting: GIT_HOSTS_SETTING };

/**
 * Integrations: registered git hosts of a workspace. Tokens and webhook secrets are
 * sealed with the installation's secrets key (bound to the row id and field), and
 * never leave the service except through `credentials()` for the build pipeline.
 *
 * @example
 * const integrations = new IntegrationService(deps);
 * const host = await integrations.install(workspaceId, { name: "forge", base_url: "https://git.example.com/", token });
 * const { token: opened } = await integrations.credentials(workspaceId, host.id); // the pipeline's fetch
 */
export class IntegrationService {
  /** Private or loopback hosts the operator allows (`--allow-private-git-hosts`); none by default. */
  private readonly gitHosts: AddressGuardPolicy;

  constructor(private readonly deps: IntegrationServiceDeps) {
    this.gitHosts = deps.gitHosts ?? DEFAULT_GIT_HOSTS;
  }

  async list(workspaceId: string): Promise<GithubIntegration[]> {
    return (await repo.listIntegrations(this.deps.db, workspaceId)).map(toWire);
  }

  async get(workspaceId: string, id: string): Promise<GithubIntegration> {
    return toWire(await this.mustFind(workspaceId, id));
  }

  async install(workspaceId: string, request: InstallIntegrationRequest): Promise<GithubIntegration> {
    const { db, secretsKey, now, newId } = this.deps;
    const name = request.name.trim();
    if (!name) throw invalidField(["body", "name"], "String should have at least 1 character", "string_too_short");
    const baseUrl = normaliseBaseUrl(request.base_url);
    await checkHost(baseUrl, this.gitHosts);
    // After the guard, whose refusal says more (loopback, metadata...) for an address in another spelling.
    const canonical = readBaseUrl(request.base_url.trim());
    if (canonical.problem) throw invalidField(["body", "base_url"], canonical.problem, "url_parsing");
    const id = newId();
    const seal = (value: string | null | undefined, field: string) => (value ? sealSecret(secretsKey, value, sealContext(id, field)) : null);
    return db.transaction(async (tx) => {
      if (await repo.findIntegrationByName(tx, workspaceId, name)) {
        throw conflict(`an integration named '${name}' already exists in this workspace`);
      }
      const row = await repo
        .insertIntegration(tx, {
          id,
          workspace_id: workspaceId,
          provider: isGithub(baseUrl) ? "github" : "git",
          name,
          base_url: baseUrl,
          token_sealed: seal(request.token, "token"),
          webhook_secret_sealed: seal(request.webhook_secret, "webhook_secret"),
          now: now(),
        })
        .catch((error: { code?: string }) => {
          if (error.code === "23505") throw conflict(`an integration named '${name}' already exists in this workspace`);
          throw error;
        });
      return toWire(row);
    });
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const { db } = this.deps;
    if (!(await repo.deleteIntegration(db, workspaceId, id.toLowerCase()))) throw notFound(`Integration '${id}' not found`);
  }

  async listRepositories(workspaceId: string, id: string): Promise<GithubRepository[]> {
    const row = await this.mustFind(workspaceId, id);
    const { secretsKey } = this.deps;
    const token = row.token_sealed ? openSecret(secretsKey, row.token_sealed, sealContext(row.id, "token")) : undefined;
    const listed = await listHostRepositories(row.base_url, token, this.gitHosts, this.deps.listing);
    return listed.map((r) => ({ host_integration_id: row.id, ...r }));
  }

  /** For the deployments pipeline: the host and its opened secrets. 404 for another workspace's id. */
  async credentials(workspaceId: string, id: string): Promise<IntegrationCredentials> {
    const row = await this.mustFind(workspaceId, id);
    const { secretsKey } = this.deps;
    const open = (sealed: string | null, field: string) => (sealed ? openSecret(secretsKey, sealed, sealContext(row.id, field)) : undefined);
    return {
      id: row.id,
      provider: row.provider,
      baseUrl: row.base_url,
      token: open(row.token_sealed, "token"),
      webhookSecret: open(row.webhook_secret_sealed, "webhook_secret"),
    };
  }

  private async mustFind(workspaceId: string, id: string): Promise<repo.IntegrationRow> {
    const row = await repo.findIntegration(this.deps.db, workspaceId, id.toLowerCase());
    if (!row) throw notFound(`Integration '${id}' not found`);
    return row;
  }
}

function sealContext(id: string, field: string): string {
  return `integration:${id}:${field}`;
}

function toWire(row: repo.IntegrationRow): GithubIntegration {
  return {
    id: row.id,
    installation_id: row.installation_id,
    name: row.name,
    base_url: row.base_url,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** A URL with an allowed scheme, a host, and no password or query; returned in normal form. */
function normaliseBaseUrl(input: string): string {
  const problem = (msg: string) => invalidField(["body", "base_url"], msg, "url_parsing");
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw problem("Input should be a valid URL, e.g. https://git.example.com/ or git://127.0.0.1:9418/");
  }
  if (!SCHEMES.has(url.protocol)) throw problem(`URL scheme should be one of https, http, git, ssh (got '${url.protocol.replace(/:$/, "")}')`);
  if (!url.hostname) throw problem("URL should name a host");
  if (url.password) throw problem("URL should not carry a password: send it as `token`");
  if (url.search || url.hash) throw problem("URL should not have a query or fragment");
  return url.href;
}

/**
 * Refuses (422) a host that is, or resolves to, an address the guard blocks. A name that
 * does not resolve now is accepted: every request to the host is checked again anyway.
 */
async function checkHost(baseUrl: string, policy: AddressGuardPolicy): Promise<void> {
  const host = new URL(baseUrl).hostname;
  try {
    await resolveGuarded(host, policy);
  } catch (error) {
    if (error instanceof AddressRefused) throw invalidField(["body", "base_url"], error.message);
  }
}

function isGithub(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === "github.com" || host === "www.github.com";
}
