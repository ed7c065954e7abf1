import { generateApiKey, parseApiKey } from "../../auth/api-key.ts";
import { badRequest, forbidden, invalidField, notFound } from "../../http/errors.ts";
import type { Queryable } from "../../storage/database.ts";
import type { ControlPlaneDeps, Plan } from "../context.ts";
import { isUuid } from "../deployments/wire.ts";
import * as repo from "./repository.ts";

const PLANS: readonly Plan[] = ["free", "plus", "enterprise", "self_hosted_enterprise"];
/** A self-hosted install runs listeners, so its first organization gets the self-hosted plan. */
const DEFAULT_PLAN: Plan = "self_hosted_enterprise";

export interface BootstrapResult {
  organization_id: string;
  workspace_id: string;
  /** The new key in full: shown once, stored only as a hash. */
  api_key: string;
  api_key_id: string;
}

interface NewApiKey {
  api_key_id: string;
  api_key: string;
  organization_id: string;
  workspace_id: string | null;
}

interface BootstrapOptions {
  orgName?: string;
  plan?: string;
  workspaceName?: string;
  /** Whom the new key serves: the whole organization (default; needs X-Tenant-Id) or the new workspace only. */
  keyScope?: "organization" | "workspace";
}

/** Whose keys a caller manages: its organization's, or one workspace's. */
interface Scope {
  organizationId: string;
  workspaceId: string | null;
}

function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/**
 * Organizations, workspaces and API keys: the rules. SQL lives in repository.ts. Used by
 * `slipway up` (the first organization) and `slipway admin`; not exposed over HTTP.
 *
 * @example
 * const tenancy = new TenancyService({ db, now: () => new Date(), newId: randomUUID });
 * const { organization_id, workspace_id, api_key } = await tenancy.bootstrap({ orgName: "Acme" });
 * await tenancy.createApiKey(organization_id, workspace_id, "ci");
 */
export class TenancyService {
  constructor(private readonly deps: Pick<ControlPlaneDeps, "db" | "now" | "newId">) {}

  /** How many organizations this control plane serves (deployments of several need a sandbox). */
  organizationCount(): Promise<number> {
    return repo.countOrganizations(this.deps.db);
  }

  /** Creates an organization, one workspace and a new API key, atomically. */
  bootstrap(options: BootstrapOptions = {}): Promise<BootstrapResult> {
    return this.deps.db.transaction((tx) => this.bootstrapIn(tx, options));
  }

  /**
   * First start over an empty database: the same as `bootstrap` for a default
   * organization. Returns null when any organization exists. Safe when several
   * processes start at once on one server (an advisory lock serialises them).
   */
  ensureDefaultTenant(): Promise<BootstrapResult | null> {
    return this.deps.db.transaction(async (tx) => {
      await repo.lockTenancy(tx);
      if ((await repo.countOrganizations(tx)) > 0) return null;
      return this.bootstrapIn(tx, { orgName: "Default", plan: DEFAULT_PLAN });
    });
  }

  async createWorkspace(organizationId: string, name: string): Promise<{ organization_id: string; workspace_id: string; name: string }> {
    const { db, now, newId } = this.deps;
    const checked = checkName(name, "workspace name");
    return db.transaction(async (tx) => {
      if (!isUuid(organizationId) || !(await repo.findOrganization(tx, organizationId))) {
        throw notFound(`organization '${organizationId}' not found`);
      }
      const id = newId();
      await repo.insertWorkspace(tx, { id, organizationId, name: checked, now: now() });
      return { organization_id: organizationId, workspace_id: id, name: checked };
    });
  }

  /** A new key for the organization, or for one of its workspaces when `workspaceId` is given. */
  async createApiKey(organizationId: string, workspaceId: string | null, description = ""): Promise<NewApiKey> {
    return this.deps.db.transaction(async (tx) => {
      if (!isUuid(organizationId) || !(await repo.findOrganization(tx, organizationId))) {
        throw notFound(`organization '${organizationId}' not found`);
      }
      if (workspaceId !== null) {
        const workspace = isUuid(workspaceId) ? await repo.findWorkspace(tx, workspaceId) : undefined;
        if (!workspace || workspace.organization_id !== organizationId) {
          throw notFound(`workspace '${workspaceId}' not found in organization '${organizationId}'`);
        }
      }
      return this.createKey(tx, organizationId, workspaceId, description);
    });
  }

  /** Revokes by key id, by prefix (`slw_<lookup>`) or by the full key; false when there was no live key. */
  revokeApiKey(reference: string): Promise<boolean> {
    const target = parseApiKey(reference)?.lookupId ?? reference.replace(/^slw_/, "").replace(/…$/, "");
    return repo.revokeApiKey(this.deps.db, target, this.deps.now());
  }

  async listApiKeys(organizationId: string) {
    if (!isUuid(organizationId)) return [];
    const rows = await repo.listApiKeys(this.deps.db, organizationId);
    return rows.map((row) => ({
      id: row.id,
      prefix: `slw_${row.lookup_id}`,
      workspace_id: row.workspace_id,
      description: row.description,
      created_at: row.created_at.toISOString(),
      revoked: row.revoked_at !== null,
    }));
  }

  async listWorkspaces(organizationId: string) {
    if (!isUuid(organizationId)) return [];
    return (await repo.listWorkspaces(this.deps.db, organizationId)).map((w) => ({ id: w.id, name: w.name, created_at: w.created_at.toISOString() }));
  }

  /** The workspaces a credential reaches: every one of its organization, or its own only. */
  async workspacesOf(caller: { organizationId: string; workspaceId: string | null }) {
    const all = await this.listWorkspaces(caller.organizationId);
    return caller.workspaceId === null ? all : all.filter((workspace) => workspace.id === caller.workspaceId);
  }

  /** The keys a credential may manage: every key of its organization, or its workspace's only. Never a secret. */
  async apiKeysOf(caller: Scope) {
    const all = await this.listApiKeys(caller.organizationId);
    return caller.workspaceId === null ? all : all.filter((key) => key.workspace_id === caller.workspaceId);
  }

  /**
   * A new key made over HTTP while `up` runs. A workspace credential makes keys of its own
   * workspace only (never one that reaches the whole organization).
   */
  async createApiKeyFor(caller: Scope, request: { description?: string; workspace_id?: string | null }): Promise<NewApiKey> {
    // Absent: the caller's own reach. null: the whole organization (refused to a workspace key).
    const workspaceId = request.workspace_id === undefined ? caller.workspaceId : request.workspace_id;
    if (caller.workspaceId !== null && workspaceId !== caller.workspaceId) {
      throw forbidden("a workspace's API key can only make keys of its own workspace");
    }
    if (workspaceId !== null && !(await this.workspacesOf(caller)).some((workspace) => workspace.id === workspaceId)) {
      throw invalidField(["body", "workspace_id"], `workspace '${workspaceId}' is not one of this organization's`);
    }
    return this.createApiKey(caller.organizationId, workspaceId, request.description ?? "");
  }

  /** Revokes a key the credential may manage; 404 for any other (another organization's look the same as none). */
  async revokeApiKeyFor(caller: Scope, keyId: string): Promise<void> {
    const key = (await this.apiKeysOf(caller)).find((candidate) => candidate.id === keyId);
    if (!key) throw notFound(`API key '${keyId}' not found`);
    await repo.revokeApiKey(this.deps.db, key.id, this.deps.now());
  }

  private async createKey(q: Queryable, organizationId: string, workspaceId: string | null, description: string): Promise<NewApiKey> {
    const { now, newId } = this.deps;
    const generated = generateApiKey();
    const id = newId();
    await repo.insertApiKey(q, { id, lookupId: generated.lookupId, hash: generated.hash, organizationId, workspaceId, description, now: now() });
    return { api_key_id: id, api_key: generated.key, organization_id: organizationId, workspace_id: workspaceId };
  }

  private async bootstrapIn(q: Queryable, options: BootstrapOptions): Promise<BootstrapResult> {
    const { now, newId } = this.deps;
    const plan = options.plan ?? DEFAULT_PLAN;
    if (!isPlan(plan)) throw badRequest(`unknown plan '${plan}': use one of ${PLANS.join(", ")}`);
    const orgName = checkName(options.orgName ?? "Default", "organization name");
    const workspaceName = checkName(options.workspaceName ?? "Default", "workspace name");
    const organizationId = newId();
    const workspaceId = newId();
    await repo.insertOrganization(q, { id: organizationId, name: orgName, plan, now: now() });
    await repo.insertWorkspace(q, { id: workspaceId, organizationId, name: workspaceName, now: now() });
    const scope = options.keyScope ?? "organization";
    const key = await this.createKey(q, organizationId, scope === "workspace" ? workspaceId : null, "bootstrap");
    return { organization_id: organizationId, workspace_id: workspaceId, api_key: key.api_key, api_key_id: key.api_key_id };
  }
}

function checkName(name: string, what: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) throw badRequest(`${what} must be 1 to 200 characters`);
  return trimmed;
}
