import { SlipwayError } from "../../http/errors.ts";
import { guardedFetch, type AddressGuardPolicy } from "../../net/address-guard.ts";
import { outboundError } from "./token-endpoint.ts";

/** Slack's token revocation method (api.slack.com/methods/auth.revoke). */
const SLACK_REVOKE_URL = "https://slack.com/api/auth.revoke";

/** Slack's answers that mean the token no longer works, so there is nothing left to revoke. */
const ALREADY_DEAD = new Set(["invalid_auth", "token_revoked", "token_expired", "account_inactive", "not_authed"]);

/**
 * Revokes a Slack token. Slack has no RFC 7009 endpoint: `auth.revoke` takes the token
 * itself as its credential and answers `{ok}` with HTTP 200 either way.
 */
export async function revokeAtSlack(revocationUrl: string | null, token: string, guard: AddressGuardPolicy): Promise<boolean> {
  const url = revocationUrl ?? SLACK_REVOKE_URL;
  let body: { ok?: boolean; error?: string } | undefined;
  try {
    const response = await guardedFetch(
      url,
      { method: "POST", headers: { authorization: `Bearer ${token}`, accept: "application/json" }, timeoutMs: 10_000 },
      guard,
    );
    body = (await response.json().catch(() => undefined)) as typeof body;
  } catch (error) {
    throw outboundError(url, error);
  }
  if (body?.ok || (body?.error && ALREADY_DEAD.has(body.error))) return true;
  throw new SlipwayError("unavailable", `Slack did not revoke the token (${body?.error ?? "no answer Slack would give"})`);
}
