import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import type { ProviderRow } from "./repository.ts";
import type { ProviderClient } from "./token-endpoint.ts";

/**
 * Sealing of the auth service's secrets, each bound to its row and field (as deployment
 * secrets are), so a sealed value copied to another row does not open.
 */
type TokenField = "access_token" | "refresh_token";

export function sealTokenField(key: Buffer, tokenId: string, field: TokenField, value: string): string {
  return sealSecret(key, value, `oauth-token:${tokenId}:${field}`);
}

export function openTokenField(key: Buffer, tokenId: string, field: TokenField, sealed: string): string {
  return openSecret(key, sealed, `oauth-token:${tokenId}:${field}`);
}

export function sealVerifier(key: Buffer, authId: string, verifier: string): string {
  return sealSecret(key, verifier, `oauth-auth:${authId}:code_verifier`);
}

export function openVerifier(key: Buffer, authId: string, sealed: string): string {
  return openSecret(key, sealed, `oauth-auth:${authId}:code_verifier`);
}

/** How to talk to a provider's endpoints, its client secret opened. */
export function providerClient(key: Buffer, row: ProviderRow): ProviderClient {
  return {
    clientId: row.client_id,
    clientSecret: row.client_secret_sealed ? openSecret(key, row.client_secret_sealed, `oauth-provider:${row.id}:client_secret`) : undefined,
    authMethod: row.token_endpoint_auth_method,
    tokenUrl: row.token_url,
    revocationUrl: row.revocation_url,
    resource: row.resource,
  };
}
