import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import { invalidField } from "../../http/errors.ts";
import { reservedReason } from "./reserved.ts";

/**
 * Deployment secrets at rest. Each value is sealed on its own with AES-256-GCM
 * (src/auth/secret-box.ts) under the configured key, bound to its deployment and name
 * (`deployment:<id>:<NAME>`), so a sealed value copied to another deployment or renamed
 * does not open. Revisions carry `{names, sealed}`; only the pipeline opens them.
 */
export interface SealedSecrets {
  names: string[];
  sealed: Record<string, string>;
}

export const NO_SECRETS: SealedSecrets = { names: [], sealed: {} };

/** Refuses reserved and duplicate names with a 422 pointing at the offending item. */
export function checkSecretNames(items: readonly { name: string }[], loc: (string | number)[]): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const reason = reservedReason(item.name);
    if (reason) throw invalidField([...loc, index, "name"], reason, "reserved_name");
    if (seen.has(item.name)) throw invalidField([...loc, index, "name"], `${item.name} is given twice.`, "duplicate_name");
    seen.add(item.name);
  });
}

export function sealSecrets(key: Buffer, deploymentId: string, secrets: readonly { name: string; value: string }[]): SealedSecrets {
  const sealed: Record<string, string> = {};
  for (const { name, value } of secrets) sealed[name] = sealSecret(key, value, context(deploymentId, name));
  return { names: secrets.map((s) => s.name), sealed };
}

/** For the pipeline, when it starts a revision's server. Throws if a value was sealed under another key. */
export function openSecrets(key: Buffer, deploymentId: string, sealed: Record<string, string>): { name: string; value: string }[] {
  return Object.entries(sealed).map(([name, value]) => ({ name, value: openSecret(key, value, context(deploymentId, name)) }));
}

function context(deploymentId: string, name: string): string {
  return `deployment:${deploymentId}:${name}`;
}
