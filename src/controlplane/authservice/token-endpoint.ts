import { SlipwayError, badRequest } from "../../http/errors.ts";
import { AddressRefused, guardedFetch, type AddressGuardPolicy, type GuardedResponse } from "../../net/address-guard.ts";

/**
 * Calls to a provider's token and revocation endpoints (RFC 6749 §4.1.3 and §6,
 * RFC 7636, RFC 7009), always through the address guard. The client authenticates as the
 * provider's `token_endpoint_auth_method` says: HTTP Basic, form fields, or not at all.
 */
export interface ProviderClient {
  clientId: string;
  clientSecret?: string;
  authMethod: string;
  tokenUrl: string;
  revocationUrl?: string | null;
  /** RFC 8707 resource, sent when the provider is an MCP server's. */
  resource?: string | null;
}

/** A token endpoint's answer, checked. */
export interface TokenSet {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  /** Seconds, when the provider said. */
  expiresIn?: number;
  /** Granted scopes, when the provider said. */
  scopes?: string[];
  /** OpenID Connect's id_token, for the account's label. */
  idToken?: string;
}

const TIMEOUT_MS = 10_000;

export function exchangeCode(
  client: ProviderClient,
  grant: { code: string; redirectUri: string; verifier?: string },
  guard: AddressGuardPolicy,
): Promise<TokenSet> {
  return requestTokens(
    client,
    {
      grant_type: "authorization_code",
      code: grant.code,
      redirect_uri: grant.redirectUri,
      ...(grant.verifier ? { code_verifier: grant.verifier } : {}),
    },
    guard,
  );
}

export function refreshTokens(client: ProviderClient, refreshToken: string, guard: AddressGuardPolicy): Promise<TokenSet> {
  return requestTokens(client, { grant_type: "refresh_token", refresh_token: refreshToken }, guard);
}

/**
 * Revokes a token at the provider (RFC 7009). False when the provider names no
 * revocation endpoint; throws when it has one and the call fails.
 */
export async function revokeToken(client: ProviderClient, token: string, hint: "access_token" | "refresh_token", guard: AddressGuardPolicy): Promise<boolean> {
  if (!client.revocationUrl) return false;
  const response = await post(client, client.revocationUrl, { token, token_type_hint: hint }, guard);
  // RFC 7009 §2.2: 200 whether or not the token was still valid.
  if (!response.ok) throw badRequest(`the provider's revocation endpoint answered HTTP ${response.status}${await errorOf(response)}`);
  return true;
}

async function requestTokens(client: ProviderClient, fields: Record<string, string>, guard: AddressGuardPolicy): Promise<TokenSet> {
  const response = await post(client, client.tokenUrl, { ...fields, ...(client.resource ? { resource: client.resource } : {}) }, guard);
  if (!response.ok)
    throw badRequest(`the provider's token endpoint refused the ${fields.grant_type} grant (HTTP ${response.status}${await errorOf(response)})`);
  const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (!body || typeof body.access_token !== "string" || !body.access_token) {
    throw badRequest("the provider's token endpoint answered without an access_token");
  }
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    tokenType: typeof body.token_type === "string" ? body.token_type : "Bearer",
    refreshToken: typeof body.refresh_token === "string" && body.refresh_token ? body.refresh_token : undefined,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
    // RFC 6749 says space-separated; GitHub answers commas.
    scopes: typeof body.scope === "string" ? body.scope.split(/[ ,]+/).filter(Boolean) : undefined,
    idToken: typeof body.id_token === "string" ? body.id_token : undefined,
  };
}

async function post(client: ProviderClient, url: string, fields: Record<string, string>, guard: AddressGuardPolicy): Promise<GuardedResponse> {
  const form = new URLSearchParams(fields);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (client.authMethod === "client_secret_basic" && client.clientSecret !== undefined) {
    // RFC 6749 §2.3.1: both parts form-encoded before Base64.
    const pair = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
  } else {
    form.set("client_id", client.clientId);
    if (client.authMethod === "client_secret_post" && client.clientSecret !== undefined) form.set("client_secret", client.clientSecret);
  }
  try {
    return await guardedFetch(url, { method: "POST", headers, body: form.toString(), timeoutMs: TIMEOUT_MS, maxBytes: 1024 * 1024 }, guard);
  } catch (error) {
    throw outboundError(url, error);
  }
}

/** A failed outbound call as the error family: a refused address is the caller's (400), the rest 503. */
export function outboundError(url: string, error: unknown): SlipwayError {
  if (error instanceof AddressRefused) return badRequest(`calling ${new URL(url).host} was refused: ${error.message}`);
  if (error instanceof SlipwayError) return error;
  const why = (error as Error).name === "TimeoutError" ? "timed out" : `connection failed: ${(error as Error).message}`;
  return new SlipwayError("unavailable", `the OAuth provider at ${new URL(url).host} is unreachable (${why})`);
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** The provider's `error` and `error_description`, quoted briefly, never the body at large. */
async function errorOf(response: GuardedResponse): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { error?: unknown; error_description?: unknown } | undefined;
  if (!body || typeof body.error !== "string") return "";
  const description = typeof body.error_description === "string" ? `: ${body.error_description.slice(0, 200)}` : "";
  return `, ${body.error.slice(0, 100)}${description}`;
}
