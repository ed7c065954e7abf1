import type { FastifyRequest } from "fastify";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { DETAIL_RESPONSES } from "../openapi.ts";
import {
  AuthAuthenticateRequest,
  AuthAuthenticateResponse,
  AuthWaitParams,
  AuthWaitQuery,
  AuthWaitResponse,
  CallbackQuery,
  CallbackResult,
  MCPOAuthProviderCreateRequest,
  OAuthFinalizeRequest,
  SetupQuery,
} from "./flow-schemas.ts";
import { OAuthProviderResponse, ProviderParams } from "./schemas.ts";

const TAGS = ["Auth Service (v2)"];

/** A provider's browser redirect carries no credentials: its `state` names the flow. */
const PUBLIC = { public: true } as const;

/** The auth service's flows: authenticate, the provider's callback, wait, and MCP discovery. */
export const registerAuthFlowRoutes: RegisterRoutes = (app, { oauthFlows: flows, oauthProviders: providers }) => {
  app.post(
    "/v2/auth/authenticate",
    {
      schema: {
        tags: TAGS,
        summary: "Authenticate",
        description:
          "Get OAuth token or start authentication flow if needed. `completed` carries the user's token (refreshed first when it is about to expire); " +
          "`pending` an authorization URL (authorization code with PKCE when the provider `uses_pkce`) and the `auth_id` to wait on; " +
          "`connection_required` means the user has a token this `agent_id` is not connected to; `token_expired` that the token could not be refreshed, " +
          "with a new URL. The token belongs to `user_id`, else `ls_user_id`, else the caller.",
        operationId: "authenticate_v2_auth_authenticate_post",
        body: AuthAuthenticateRequest,
        response: { 200: AuthAuthenticateResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => flows.authenticate(requireTenant(request), request.body),
  );

  app.get(
    "/v2/auth/wait/:auth_id",
    {
      schema: {
        tags: TAGS,
        summary: "Wait For Auth Completion",
        description: "Wait for OAuth authentication completion: answers as soon as the callback has stored the token, or `timeout`.",
        operationId: "wait_for_auth_completion_v2_auth_wait__auth_id__get",
        params: AuthWaitParams,
        querystring: AuthWaitQuery,
        response: { 200: AuthWaitResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => flows.wait(requireTenant(request), request.params.auth_id, request.query.timeout ?? 30),
  );

  app.get(
    "/v2/auth/callback/:provider_id",
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: "Oauth Callback Get",
        description:
          "Handle OAuth callback redirect from OAuth providers: trades the code for tokens. A state is good once; a forged, used or expired one is refused (400).",
        operationId: "oauth_callback_get_v2_auth_callback__provider_id__get",
        security: [],
        params: ProviderParams,
        querystring: CallbackQuery,
        response: { 200: CallbackResult, ...DETAIL_RESPONSES },
      },
    },
    async (request) => flows.callback(request.params.provider_id, request.query),
  );

  app.post(
    "/v2/auth/callback/:provider_id",
    {
      schema: {
        tags: TAGS,
        summary: "Oauth Callback",
        description: "Finalize a flow from a frontend that received the provider's redirect. The flow must be of the caller's workspace.",
        operationId: "oauth_callback_v2_auth_callback__provider_id__post",
        params: ProviderParams,
        body: OAuthFinalizeRequest,
        response: { 200: CallbackResult, ...DETAIL_RESPONSES },
      },
    },
    async (request) => flows.callback(request.params.provider_id, request.body, requireTenant(request).workspaceId),
  );

  app.get(
    "/v2/auth/setup/:provider_id",
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: "Oauth Setup Callback",
        description:
          "Handle OAuth setup callback redirect from GitHub Apps: `setup_action=update` needs no token exchange; a new installation with code and state is handled as the callback.",
        operationId: "oauth_setup_callback_v2_auth_setup__provider_id__get",
        security: [],
        params: ProviderParams,
        querystring: SetupQuery,
        response: { 200: CallbackResult, ...DETAIL_RESPONSES },
      },
    },
    async (request: FastifyRequest<{ Params: ProviderParams; Querystring: SetupQuery }>) => {
      const { provider_id } = request.params;
      if (request.query.setup_action === "update" && !request.query.code) {
        return { status: "updated" as const, auth_id: null, provider_id, message: "Installation updated: no token exchange is needed." };
      }
      return flows.callback(provider_id, request.query);
    },
  );

  app.post(
    "/v2/auth/providers/mcp-discover",
    {
      schema: {
        tags: TAGS,
        summary: "Create Mcp Oauth Provider",
        description:
          "Create an OAuth provider via MCP auto-discovery: reads the server's protected-resource metadata (RFC 9728) and its authorization server's metadata " +
          "(RFC 8414 or OpenID Connect Discovery), then registers a client (RFC 7591) whose redirect URI is this server's callback. " +
          "A server on a private address is refused (422) unless the operator allows its host.",
        operationId: "create_mcp_oauth_provider_v2_auth_providers_mcp_discover_post",
        body: MCPOAuthProviderCreateRequest,
        response: { 200: OAuthProviderResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.createFromMcpServer(requireTenant(request), request.body),
  );
};
