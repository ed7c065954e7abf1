import type { TenantContext } from "../context.ts";

/**
 * Who "the calling user" of the auth service is: a bearer token's subject, or the API
 * key's id. Tokens obtained without a `user_id` belong to this caller.
 */
export function callerId(tenant: TenantContext): string {
  return tenant.principal.id;
}
