import { sealSecret } from "../../auth/secret-box.ts";
import { conflict, invalidField, notFound } from "../../http/errors.ts";
import { AddressRefused, resolveGuarded, type AddressGuardPolicy } from "../../net/address-guard.ts";
import type { ControlPlaneDeps, TenantContext } from "../context.ts";
import { isUuid } from "../deployments/wire.ts";
import type { MCPOAuthProviderCreateRequest } from "./flow-schemas.ts";
import { discoverMcpProvider } from "./mcp-discovery.ts";
import * as repo from "./repository.ts";
import type { OAuthProviderCreateRequest, OAuthProviderResponse, OAuthProviderUpdateRequest } from "./schemas.ts";

type ProviderFields = Omit<repo.ProviderRow, "id" | "organization_id" | "workspace_id" | "client_secret_sealed" | "created_at" | "updated_at"> & {
  client_secret: string | null | undefined;
};

/**
 * OAuth provider configuration of a workspace (the vendor's auth service). The vendor's
 * record names the organization; Slipway also keys it by workspace so that one workspace
 * never sees another's providers (and their client ids). Client secrets are sealed at rest.
 *
 * @example
 * const providers = new OAuthProviderService(deps, { allowHosts: [] });
 * const created = await providers.create(tenant, { provider_id: "github", name: "GitHub", client_id, auth_url, token_url });
 * await providers.remove(tenant, created.provider_id);
 */
export class OAuthProviderService {
  constructor(
    private readonly deps: Pick<ControlPlaneDeps, "db" | "secretsKey" | "now" | "newId" | "publicUrl">,
    /** The address guard of outbound calls: a token endpoint on a private address needs the operator's allowance. */
    private readonly guard: AddressGuardPolicy,
  ) {}

  async list(tenant: TenantContext): Promise<OAuthProviderResponse[]> {
    return (await repo.listProviders(this.deps.db, tenant.workspaceId)).map(toWire);
  }

  async get(tenant: TenantContext, reference: string): Promise<OAuthProviderResponse> {
    return toWire(await this.mustFind(tenant, reference));
  }

  async create(tenant: TenantContext, request: OAuthProviderCreateRequest): Promise<OAuthProviderResponse> {
    await this.checkTokenUrl(request.token_url, ["body", "token_url"]);
    return this.insert(tenant, {
      provider_id: request.provider_id,
      name: request.name,
      client_id: request.client_id,
      client_secret: request.client_secret,
      auth_url: request.auth_url,
      token_url: request.token_url,
      uses_pkce: request.uses_pkce ?? false,
      code_challenge_method: request.code_challenge_method ?? "S256",
      provider_type: request.provider_type ?? null,
      token_endpoint_auth_method: request.token_endpoint_auth_method ?? "client_secret_post",
      mcp_server_url: null,
      is_dynamic_client: false,
      revocation_url: null,
      resource: null,
    });
  }

  /** A provider made from an MCP server's OAuth metadata, with a dynamically registered client. */
  async createFromMcpServer(tenant: TenantContext, request: MCPOAuthProviderCreateRequest): Promise<OAuthProviderResponse> {
    if (await repo.findProvider(this.deps.db, tenant.workspaceId, request.provider_id, false)) throw this.duplicate(request.provider_id);
    const redirectUri = new URL(`/v2/auth/callback/${encodeURIComponent(request.provider_id)}`, this.deps.publicUrl).href;
    const found = await discoverMcpProvider(request.mcp_server_url, redirectUri, `Slipway: ${request.name}`, this.guard);
    return this.insert(tenant, {
      provider_id: request.provider_id,
      name: request.name,
      client_id: found.clientId,
      client_secret: found.clientSecret,
      auth_url: found.authUrl,
      token_url: found.tokenUrl,
      uses_pkce: true,
      code_challenge_method: "S256",
      provider_type: null,
      token_endpoint_auth_method: found.authMethod,
      mcp_server_url: request.mcp_server_url,
      is_dynamic_client: true,
      revocation_url: found.revocationUrl,
      resource: found.resource,
    });
  }

  private async insert(tenant: TenantContext, fields: ProviderFields): Promise<OAuthProviderResponse> {
    const { db, newId, now } = this.deps;
    const id = newId();
    const at = now();
    const { client_secret, ...rest } = fields;
    return db.transaction(async (tx) => {
      if (await repo.findProvider(tx, tenant.workspaceId, fields.provider_id, false)) throw this.duplicate(fields.provider_id);
      const row = await repo
        .insertProvider(tx, {
          ...rest,
          id,
          organization_id: tenant.organizationId,
          workspace_id: tenant.workspaceId,
          client_secret_sealed: this.seal(id, client_secret),
          created_at: at,
          updated_at: at,
        })
        .catch((error: { code?: string }) => {
          throw error.code === "23505" ? this.duplicate(fields.provider_id) : error;
        });
      return toWire(row);
    });
  }

  private duplicate(providerId: string) {
    return conflict(`an OAuth provider with provider_id '${providerId}' already exists`);
  }

  /**
   * The server calls the token endpoint: one that is, or resolves to, a private address is
   * refused (422) unless the operator allows its host. A name that does not resolve now is
   * accepted; every call is checked again.
   */
  private async checkTokenUrl(tokenUrl: string, loc: string[]): Promise<void> {
    try {
      await resolveGuarded(new URL(tokenUrl).hostname, this.guard);
    } catch (error) {
      if (error instanceof AddressRefused) throw invalidField(loc, error.message);
    }
  }

  async update(tenant: TenantContext, reference: string, patch: OAuthProviderUpdateRequest): Promise<OAuthProviderResponse> {
    const { db, now } = this.deps;
    if (patch.token_url) await this.checkTokenUrl(patch.token_url, ["body", "token_url"]);
    return db.transaction(async (tx) => {
      const current = await repo.findProvider(tx, tenant.workspaceId, reference, isUuid(reference));
      if (!current) throw notFound(`OAuth provider '${reference}' not found`);
      const next: repo.ProviderRow = {
        ...current,
        name: patch.name ?? current.name,
        client_id: patch.client_id ?? current.client_id,
        // An empty string clears the secret (public clients); null or absent keeps it.
        client_secret_sealed:
          patch.client_secret === undefined || patch.client_secret === null ? current.client_secret_sealed : this.seal(current.id, patch.client_secret),
        auth_url: patch.auth_url ?? current.auth_url,
        token_url: patch.token_url ?? current.token_url,
        uses_pkce: patch.uses_pkce ?? current.uses_pkce,
        code_challenge_method: patch.code_challenge_method ?? current.code_challenge_method,
        updated_at: now(),
      };
      return toWire(await repo.updateProvider(tx, next));
    });
  }

  async remove(tenant: TenantContext, reference: string): Promise<{ id: string; provider_id: string; deleted: true }> {
    const row = await this.mustFind(tenant, reference);
    await repo.deleteProvider(this.deps.db, tenant.workspaceId, row.id);
    return { id: row.id, provider_id: row.provider_id, deleted: true };
  }

  private async mustFind(tenant: TenantContext, reference: string): Promise<repo.ProviderRow> {
    const row = await repo.findProvider(this.deps.db, tenant.workspaceId, reference, isUuid(reference));
    if (!row) throw notFound(`OAuth provider '${reference}' not found`);
    return row;
  }

  private seal(id: string, secret: string | null | undefined): string | null {
    return secret ? sealSecret(this.deps.secretsKey, secret, `oauth-provider:${id}:client_secret`) : null;
  }
}

function toWire(row: repo.ProviderRow): OAuthProviderResponse {
  return {
    id: row.id,
    organization_id: row.organization_id,
    provider_id: row.provider_id,
    name: row.name,
    client_id: row.client_id,
    auth_url: row.auth_url,
    token_url: row.token_url,
    uses_pkce: row.uses_pkce,
    code_challenge_method: row.code_challenge_method,
    provider_type: row.provider_type,
    mcp_server_url: row.mcp_server_url,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    is_dynamic_client: row.is_dynamic_client,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
