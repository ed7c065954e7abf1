import { SlipwayError, invalidField } from "../../http/errors.ts";
import { AddressRefused, guardedFetch, type AddressGuardPolicy } from "../../net/address-guard.ts";

/**
 * What an MCP server's OAuth metadata says, read the way the MCP authorization spec asks:
 * its protected-resource metadata (RFC 9728) names its authorization server, whose
 * metadata (RFC 8414, or OpenID Connect Discovery) names the endpoints; a client is then
 * registered dynamically (RFC 7591) with Slipway's callback as its redirect URI.
 * Every request goes through the address guard.
 */
export interface DiscoveredProvider {
  resource: string;
  issuer: string;
  authUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  clientId: string;
  clientSecret: string | null;
  authMethod: "none" | "client_secret_basic" | "client_secret_post";
}

type Json = Record<string, unknown>;
const FIELD = ["body", "mcp_server_url"];
const refuse = (msg: string) => invalidField(FIELD, msg, "value_error");

export async function discoverMcpProvider(
  mcpServerUrl: string,
  redirectUri: string,
  clientName: string,
  guard: AddressGuardPolicy,
): Promise<DiscoveredProvider> {
  const server = new URL(mcpServerUrl);
  server.hash = "";
  const resourceMetadata = await firstJson(wellKnown(server, "oauth-protected-resource"), guard);
  if (!resourceMetadata) throw refuse(`${server.href} publishes no OAuth protected-resource metadata (RFC 9728 /.well-known/oauth-protected-resource)`);
  const resource = typeof resourceMetadata.json.resource === "string" ? resourceMetadata.json.resource : server.href;
  if (!sameResource(resource, server))
    throw refuse(`the protected-resource metadata at ${resourceMetadata.url} is for '${resource.slice(0, 200)}', not this server`);
  const servers = resourceMetadata.json.authorization_servers;
  const issuer = Array.isArray(servers) ? servers.find((s): s is string => typeof s === "string" && /^https?:\/\//.test(s)) : undefined;
  if (!issuer) throw refuse(`the protected-resource metadata at ${resourceMetadata.url} names no authorization server`);

  const issuerUrl = new URL(issuer);
  const asMetadata = await firstJson(
    [...wellKnown(issuerUrl, "oauth-authorization-server"), ...wellKnown(issuerUrl, "openid-configuration"), ...suffixed(issuerUrl)],
    guard,
  );
  if (!asMetadata) throw refuse(`the authorization server ${issuer} publishes no metadata (RFC 8414 or OpenID Connect Discovery)`);
  const meta = asMetadata.json;
  if (typeof meta.issuer === "string" && stripSlash(meta.issuer) !== stripSlash(issuer)) {
    throw refuse(`the metadata at ${asMetadata.url} is for issuer '${meta.issuer.slice(0, 200)}', not '${issuer}' (RFC 8414 §3.3)`);
  }
  const authUrl = httpUrl(meta.authorization_endpoint);
  const tokenUrl = httpUrl(meta.token_endpoint);
  if (!authUrl || !tokenUrl) throw refuse(`the authorization server ${issuer} names no authorization_endpoint or token_endpoint`);
  const challenges = meta.code_challenge_methods_supported;
  if (!Array.isArray(challenges) || !challenges.includes("S256")) {
    throw refuse(`the authorization server ${issuer} does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires`);
  }
  const registrationUrl = httpUrl(meta.registration_endpoint);
  if (!registrationUrl) {
    throw refuse(
      `the authorization server ${issuer} offers no dynamic client registration (RFC 7591): register a client there and create the provider with POST /v2/auth/providers`,
    );
  }
  const authMethod = chooseAuthMethod(meta.token_endpoint_auth_methods_supported);
  const client = await register(registrationUrl, { redirectUri, clientName, authMethod }, guard);
  return { resource, issuer, authUrl, tokenUrl, revocationUrl: httpUrl(meta.revocation_endpoint) ?? null, ...client };
}

/** RFC 9728 §3.1 and RFC 8414 §3.1: the well-known segment goes between the host and the path; then at the root. */
function wellKnown(url: URL, name: string): string[] {
  const path = url.pathname.replace(/\/+$/, "");
  const urls = [`${url.origin}/.well-known/${name}${path}`];
  if (path) urls.push(`${url.origin}/.well-known/${name}`);
  return urls;
}

/** OpenID Connect Discovery's own rule: appended to the issuer's path. */
function suffixed(issuer: URL): string[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  return path ? [`${issuer.origin}${path}/.well-known/openid-configuration`] : [];
}

function chooseAuthMethod(supported: unknown): DiscoveredProvider["authMethod"] {
  // RFC 8414 §2: absent means client_secret_basic.
  const methods = Array.isArray(supported) ? supported : ["client_secret_basic"];
  if (methods.includes("client_secret_basic")) return "client_secret_basic";
  if (methods.includes("client_secret_post")) return "client_secret_post";
  if (methods.includes("none")) return "none";
  throw refuse(`the authorization server supports none of Slipway's client authentication methods (client_secret_basic, client_secret_post, none)`);
}

async function register(
  url: string,
  client: { redirectUri: string; clientName: string; authMethod: DiscoveredProvider["authMethod"] },
  guard: AddressGuardPolicy,
): Promise<Pick<DiscoveredProvider, "clientId" | "clientSecret" | "authMethod">> {
  const request = {
    client_name: client.clientName,
    redirect_uris: [client.redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: client.authMethod,
  };
  const response = await call(
    url,
    { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(request) },
    guard,
  );
  const body = (await response.json().catch(() => undefined)) as Json | undefined;
  if (response.status !== 201 && response.status !== 200) {
    const why =
      typeof body?.error === "string" ? `: ${body.error}${typeof body.error_description === "string" ? ` (${body.error_description.slice(0, 200)})` : ""}` : "";
    throw refuse(`the authorization server refused to register a client (HTTP ${response.status}${why})`);
  }
  if (!body || typeof body.client_id !== "string" || !body.client_id) throw refuse("the authorization server registered a client without a client_id");
  const method = body.token_endpoint_auth_method;
  return {
    clientId: body.client_id,
    clientSecret: typeof body.client_secret === "string" ? body.client_secret : null,
    authMethod: method === "none" || method === "client_secret_post" || method === "client_secret_basic" ? method : client.authMethod,
  };
}

/** The first of `urls` that answers 200 with a JSON object. */
async function firstJson(urls: string[], guard: AddressGuardPolicy): Promise<{ url: string; json: Json } | undefined> {
  for (const url of urls) {
    const response = await call(url, { headers: { accept: "application/json" } }, guard);
    if (response.status !== 200) continue;
    const json = (await response.json().catch(() => undefined)) as unknown;
    if (json && typeof json === "object" && !Array.isArray(json)) return { url, json: json as Json };
  }
  return undefined;
}

async function call(url: string, init: Parameters<typeof guardedFetch>[1], guard: AddressGuardPolicy) {
  try {
    return await guardedFetch(url, { timeoutMs: 10_000, maxBytes: 256 * 1024, ...init }, guard);
  } catch (error) {
    if (error instanceof AddressRefused) throw refuse(error.message);
    // A name that does not resolve is the caller's mistake; a server that does not answer is not.
    const code = (error as { code?: string }).code;
    if (code === "ENOTFOUND") throw refuse(`${new URL(url).hostname} does not resolve`);
    const why = (error as Error).name === "TimeoutError" ? "timed out" : `connection failed: ${(error as Error).message}`;
    throw new SlipwayError("unavailable", `${new URL(url).host} is unreachable (${why})`);
  }
}

function httpUrl(value: unknown): string | undefined {
  return typeof value === "string" && /^https?:\/\/[^\s]+$/.test(value) ? value : undefined;
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The metadata's resource is this server, or the origin it is served from. */
function sameResource(resource: string, server: URL): boolean {
  return [stripSlash(server.href), stripSlash(server.origin)].includes(stripSlash(resource));
}
