import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * A real OAuth 2.0 / OpenID Connect provider (the `oidc-provider` package) on loopback, for
 * the auth service's flows. Its login and consent pages are replaced by a handler that
 * signs in `account` and grants what was asked, so a test drives the browser part with
 * plain fetch and cookies (`authorize`). It also serves an MCP server's protected-resource
 * metadata (RFC 9728) at /.well-known/oauth-protected-resource/mcp naming itself as the
 * authorization server. Access tokens live `accessTokenTtl` seconds.
 */
export interface OidcFixture {
  issuer: string;
  /** The MCP server whose metadata points at this provider. */
  mcpUrl: string;
  /** The registered confidential client, for providers created by hand. */
  client: { id: string; secret: string };
  /** Who signs in at the next login. */
  account: string;
  /** Follows the provider's redirects with a cookie jar until one leads to `callbackPrefix`; returns that URL. */
  authorize(authUrl: string, callbackPrefix: string): Promise<URL>;
  /** RFC 7662 introspection with the static client: whether the provider still takes the token. */
  active(token: string, client?: { id: string; secret: string }): Promise<boolean>;
  close(): Promise<void>;
}

export async function startOidcProvider(options: { redirectUris: string[]; accessTokenTtl: number }): Promise<OidcFixture> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const mcpUrl = `${issuer}/mcp`;
  const client = { id: "slipway-static", secret: "static-client-secret" };
  const fixture = { account: "alice" } as OidcFixture;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    scopes: ["openid", "offline_access", "email"],
    claims: { openid: ["sub"], email: ["email"] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, email: `${sub}@example.test` }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (resource !== mcpUrl) throw new Error(`unknown resource ${resource}`);
          return { scope: "mcp:tools", accessTokenFormat: "opaque", accessTokenTTL: options.accessTokenTtl };
        },
      },
    },
    issueRefreshToken: async (_ctx, c) => c.grantTypeAllowed("refresh_token"),
    ttl: { AccessToken: options.accessTokenTtl },
    cookies: { keys: ["oidc-fixture-cookie-key"] },
  });
  const handle = provider.callback();

  server.on("request", (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ resource: mcpUrl, authorization_servers: [issuer], scopes_supported: ["mcp:tools"] }));
      return;
    }
    if (url.pathname.startsWith("/interaction/")) {
      void interact(provider, fixture, req, res).catch((error: Error) => {
        res.statusCode = 500;
        res.end(error.message);
      });
      return;
    }
    handle(req, res);
  });

  return Object.assign(fixture, {
    issuer,
    mcpUrl,
    client,
    async authorize(authUrl: string, callbackPrefix: string) {
      const jar = new Map<string, string>();
      let next = new URL(authUrl);
      for (let hop = 0; hop < 12; hop++) {
        const response = await fetch(next, { redirect: "manual", headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
        for (const cookie of response.headers.getSetCookie()) {
          const [pair] = cookie.split(";");
          const at = pair.indexOf("=");
          jar.set(pair.slice(0, at).trim(), pair.slice(at + 1));
        }
        const location = response.headers.get("location");
        await response.arrayBuffer();
        if (!location) throw new Error(`the provider stopped at ${next.pathname} with HTTP ${response.status}`);
        next = new URL(location, next);
        if (next.href.startsWith(callbackPrefix)) return next;
      }
      throw new Error("too many redirects at the provider");
    },
    async active(token: string, as = client) {
      const response = await fetch(`${issuer}/token/introspection`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, client_id: as.id, client_secret: as.secret }),
      });
      return ((await response.json()) as { active?: boolean }).active === true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** Signs in the fixture's account, then grants every scope and resource scope the request asked for. */
async function interact(
  provider: Provider,
  fixture: OidcFixture,
  req: Parameters<Provider["interactionDetails"]>[0],
  res: Parameters<Provider["interactionDetails"]>[1],
) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") {
    await provider.interactionFinished(req, res, { login: { accountId: fixture.account } }, { mergeWithLastSubmission: false });
    return;
  }
  const accountId = details.session?.accountId ?? fixture.account;
  const clientId = String(details.params.client_id);
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId });
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant!.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant!.addResourceScope(resource, scopes.join(" "));
  const grantId = await grant!.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
