import type { PipelineServices } from "../context.ts";
import type { Isolation } from "./isolation.ts";

/**
 * Without a sandbox, every deployment's code runs with the control plane's rights: one
 * organization's code could read the others' data and secrets, and the secrets key.
 * Serving more than one organization then needs the operator's word (--allow-unsandboxed).
 * Returns why it is refused, or undefined.
 */
export async function unsandboxedTenantsRefusal(
  tenancy: PipelineServices["tenancy"],
  isolation: Isolation,
  allowed: boolean | undefined,
): Promise<string | undefined> {
  if (isolation.sandboxed || allowed) return undefined;
  const organizations = await tenancy.organizationCount();
  if (organizations <= 1) return undefined;
  return (
    `deployments cannot be sandboxed here (${isolation.sandbox.reason}) and this control plane has ${organizations} organizations: ` +
    "their code would run with its rights and could read each other's data and secrets. " +
    "Install bubblewrap (and allow user namespaces), or start `slipway up --allow-unsandboxed` to accept that risk (docs/security.md, Isolation)."
  );
}
