import { badRequest, conflict, forbidden, notFound } from "../../http/errors.ts";
import type { ControlPlaneDeps, TenantContext } from "../context.ts";
import { countDeploymentsOfListener } from "../deployments/repository.ts";
import * as repo from "./repository.ts";
import type { Listener, ListenerCreateRequest, ListenerPatchRequest } from "./schemas.ts";

const listenerNotFound = (id: string) => notFound(`Listener ID ${id} not found.`);

function requireSelfHostedEnterprise(tenant: TenantContext): void {
  if (tenant.plan !== "self_hosted_enterprise") {
    throw forbidden(
      `Listeners cannot be used in workspace ID '${tenant.workspaceId}': listeners are only available to organizations on a self-hosted enterprise plan.`,
    );
  }
}

/**
 * Listeners bind a Kubernetes cluster to the control plane. They exist only for
 * organizations on the self-hosted enterprise plan (the vendor's rule): every call but the
 * list answers 403 for the others, naming the workspace. Slipway keeps them as records:
 * nothing connects to a cluster yet (the Kubernetes runtime is planned).
 *
 * @example
 * const listeners = new ListenerService({ db, now: () => new Date(), newId: randomUUID });
 * const listener = await listeners.create(tenant, { compute_id: "cluster-1", compute_config: {} });
 */
export class ListenerService {
  constructor(private readonly deps: Pick<ControlPlaneDeps, "db" | "now" | "newId">) {}

  async create(tenant: TenantContext, body: ListenerCreateRequest): Promise<Listener> {
    const { deps } = this;
    requireSelfHostedEnterprise(tenant);
    const id = deps.newId();
    const inserted = await repo.insertListener(deps.db, {
      id,
      workspaceId: tenant.workspaceId,
      version: body.version ?? null,
      computeId: body.compute_id,
      computeConfig: { k8s_namespaces: body.compute_config.k8s_namespaces ?? null },
      now: deps.now().toISOString(),
    });
    if (!inserted) {
      throw conflict(`Listener for workspace ID '${tenant.workspaceId}' and compute ID '${body.compute_id}' already exists.`);
    }
    return this.get(tenant, id);
  }

  async get(tenant: TenantContext, id: string): Promise<Listener> {
    requireSelfHostedEnterprise(tenant);
    const row = await repo.getListener(this.deps.db, tenant.workspaceId, id);
    if (!row) throw listenerNotFound(id);
    return toListener(row);
  }

  async list(tenant: TenantContext, page: { limit: number; offset: number }): Promise<{ resources: Listener[]; offset: number }> {
    const rows = await repo.listListeners(this.deps.db, tenant.workspaceId, page);
    return { resources: rows.map(toListener), offset: page.offset + rows.length };
  }

  async patch(tenant: TenantContext, id: string, body: ListenerPatchRequest): Promise<Listener> {
    const { deps } = this;
    requireSelfHostedEnterprise(tenant);
    return deps.db.transaction(async (tx) => {
      const current = await repo.getListener(tx, tenant.workspaceId, id);
      if (!current) throw listenerNotFound(id);
      if (body.compute_id !== undefined && body.compute_id !== current.compute_id) {
        throw badRequest("compute_id cannot be changed once the listener is created.");
      }
      const updated = await repo.updateListener(tx, tenant.workspaceId, id, {
        version: body.version ?? undefined,
        computeConfig: body.compute_config ? { k8s_namespaces: body.compute_config.k8s_namespaces ?? null } : undefined,
        now: deps.now().toISOString(),
      });
      return toListener(updated!);
    });
  }

  async delete(tenant: TenantContext, id: string): Promise<void> {
    requireSelfHostedEnterprise(tenant);
    await this.deps.db.transaction(async (tx) => {
      if (!(await repo.getListener(tx, tenant.workspaceId, id))) throw listenerNotFound(id);
      // A deployment's listener cannot change, so deleting it would strand the deployment.
      const users = await countDeploymentsOfListener(tx, tenant.workspaceId, id);
      if (users > 0) throw conflict(`Listener ID ${id} is used by ${users} deployment(s); delete them first.`);
      await repo.deleteListener(tx, tenant.workspaceId, id);
    });
  }
}

function toListener(row: repo.ListenerRow): Listener {
  return {
    id: row.id,
    version: row.version,
    compute_type: row.compute_type,
    compute_id: row.compute_id,
    compute_config: { k8s_namespaces: row.compute_config.k8s_namespaces ?? null },
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
