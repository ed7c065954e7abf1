import { Type, type Static } from "@sinclair/typebox";
import { NullableBoolean, NullableString, StringEnum } from "../schema-types.ts";

/** Wire shapes of the auth service's flows, tokens and agent connections, after the vendor's. */

/** Scopes travel space-separated (RFC 6749 §3.3): no spaces, quotes or backslashes inside one. */
const Scope = Type.String({ minLength: 1, maxLength: 200, pattern: "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$" });
const Id = (title: string, description?: string) => Type.String({ minLength: 1, maxLength: 200, title, ...(description ? { description } : {}) });
const NullableId = (title: string) => Type.Optional(NullableString({ minLength: 1, maxLength: 200, title }));
const Uuid = (title: string) => Type.String({ format: "uuid", title });

export const AuthAuthenticateRequest = Type.Object(
  {
    provider: Id("Provider", "The provider's `provider_id`."),
    scopes: Type.Array(Scope, { maxItems: 100, title: "Scopes" }),
    user_id: NullableId("User Id"),
    ls_user_id: NullableId("Ls User Id"),
    agent_id: NullableId("Agent Id"),
    use_agent_builder_public_oauth: Type.Optional(Type.Boolean({ default: false, title: "Use Agent Builder Public Oauth" })),
    force_new: Type.Optional(Type.Boolean({ default: false, title: "Force New" })),
    token_id: Type.Optional(NullableString({ format: "uuid", title: "Token Id" })),
    is_default: Type.Optional(Type.Boolean({ default: true, title: "Is Default" })),
  },
  { title: "AuthAuthenticateRequest", description: "Auth authenticate request." },
);
export type AuthAuthenticateRequest = Static<typeof AuthAuthenticateRequest>;

export const AUTH_STATUSES = ["completed", "pending", "connection_required", "token_expired"] as const;
export type AuthStatus = (typeof AUTH_STATUSES)[number];

export const AuthAuthenticateResponse = Type.Object(
  {
    status: StringEnum(AUTH_STATUSES, { title: "AuthStatus", description: "Valid authentication status values." }),
    url: Type.Optional(NullableString({ title: "Url" })),
    auth_id: Type.Optional(NullableString({ title: "Auth Id" })),
    token: Type.Optional(NullableString({ title: "Token" })),
    user_id: Type.Optional(NullableString({ title: "User Id" })),
    metadata: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { title: "Metadata" })),
  },
  { title: "AuthAuthenticateResponse", description: "Auth authenticate response." },
);
export type AuthAuthenticateResponse = Static<typeof AuthAuthenticateResponse>;

export const AUTH_WAIT_STATUSES = ["completed", "pending", "timeout", "not_found"] as const;
export type AuthWaitStatus = (typeof AUTH_WAIT_STATUSES)[number];

export const AuthWaitResponse = Type.Object(
  {
    status: StringEnum(AUTH_WAIT_STATUSES, { title: "AuthWaitStatus", description: "Valid auth wait status values." }),
    token: Type.Optional(NullableString({ title: "Token" })),
  },
  { title: "AuthWaitResponse", description: "Auth wait response." },
);
export type AuthWaitResponse = Static<typeof AuthWaitResponse>;

/** The longest a wait may last: a request held longer outlives most proxies' idle limits. */
export const MAX_WAIT_SECONDS = 300;

export const AuthWaitParams = Type.Object({
  auth_id: Type.String({ minLength: 1, maxLength: 200, title: "Auth Id", description: "Authentication ID to wait for" }),
});
export const AuthWaitQuery = Type.Object({
  timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_WAIT_SECONDS,
      default: 30,
      title: "Timeout",
      description: `Timeout in seconds (default: 30, at most ${MAX_WAIT_SECONDS})`,
    }),
  ),
});

const Described = (title: string, description: string) => Type.Optional(Type.String({ maxLength: 4096, title, description }));

export const CallbackQuery = Type.Object({
  code: Described("Code", "Authorization code from OAuth provider"),
  state: Described("State", "State parameter containing auth_id"),
  error: Described("Error", "Error code from OAuth provider"),
  error_description: Described("Error Description", "Error description from OAuth provider"),
});
export type CallbackQuery = Static<typeof CallbackQuery>;

export const SetupQuery = Type.Object({
  ...CallbackQuery.properties,
  setup_action: Described("Setup Action", "Setup action from GitHub App"),
  installation_id: Type.Optional(Type.Integer({ title: "Installation Id", description: "GitHub App installation ID" })),
});
export type SetupQuery = Static<typeof SetupQuery>;

export const OAuthFinalizeRequest = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 4096, title: "Code" }), state: Type.String({ minLength: 1, maxLength: 4096, title: "State" }) },
  { title: "OAuthFinalizeRequest", description: "Request model for frontend-bridged OAuth callback finalization." },
);
export type OAuthFinalizeRequest = Static<typeof OAuthFinalizeRequest>;

export const CallbackResult = Type.Object(
  {
    status: StringEnum(["completed", "updated"], { title: "Status" }),
    auth_id: Type.Optional(NullableString({ title: "Auth Id" })),
    provider_id: Type.String({ title: "Provider Id" }),
    message: Type.String({ title: "Message" }),
  },
  { title: "OAuthCallbackResult" },
);
export type CallbackResult = Static<typeof CallbackResult>;

export const MCPOAuthProviderCreateRequest = Type.Object(
  {
    provider_id: Type.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]*$", title: "Provider Id" }),
    name: Type.String({ minLength: 1, maxLength: 200, title: "Name" }),
    mcp_server_url: Type.String({ minLength: 1, maxLength: 2048, pattern: "^https?://[^\\s]+$", title: "Mcp Server Url" }),
  },
  { additionalProperties: false, title: "MCPOAuthProviderCreateRequest", description: "Request model for creating OAuth provider via MCP auto-discovery." },
);
export type MCPOAuthProviderCreateRequest = Static<typeof MCPOAuthProviderCreateRequest>;

export const OAuthTokenSummary = Type.Object(
  {
    id: Type.String({ title: "Id" }),
    provider_id: Type.String({ title: "Provider Id" }),
    provider_account_label: NullableString({ title: "Provider Account Label" }),
    scopes: Type.Array(Type.String(), { title: "Scopes", default: [] }),
    expires_at: NullableString({ format: "date-time", title: "Expires At" }),
    is_default: Type.Boolean({ title: "Is Default", default: false }),
    created_at: Type.String({ format: "date-time", title: "Created At" }),
    updated_at: Type.String({ format: "date-time", title: "Updated At" }),
  },
  { title: "OAuthTokenSummary", description: "Public-facing token summary: no sensitive data." },
);
export type OAuthTokenSummary = Static<typeof OAuthTokenSummary>;

export const OAuthTokenUpdateRequest = Type.Object(
  {
    provider_account_label: Type.Optional(NullableString({ maxLength: 200, title: "Provider Account Label" })),
    is_default: Type.Optional(NullableBoolean({ title: "Is Default" })),
  },
  { additionalProperties: false, title: "OAuthTokenUpdateRequest", description: "Request model for updating a token's metadata." },
);
export type OAuthTokenUpdateRequest = Static<typeof OAuthTokenUpdateRequest>;

export const OAuthTokenStatusResponse = Type.Object(
  { has_token: Type.Boolean({ title: "Has Token" }) },
  { title: "OAuthTokenStatusResponse", description: "Simple status indicating if a user has a token for a provider/agent." },
);

export const TokensQuery = Type.Object({
  provider_id: Type.Optional(NullableString({ minLength: 1, maxLength: 200, title: "Provider Id", description: "OAuth provider ID" })),
});
export const RequiredProviderQuery = Type.Object({ provider_id: Id("Provider Id", "OAuth provider ID") });
export const TokenParams = Type.Object({ token_id: Uuid("Token Id") });

export const TokensRevoked = Type.Object(
  { message: Type.String(), provider_id: Type.Optional(Type.String()), deleted: Type.Integer(), revoked_at_provider: Type.Integer() },
  { title: "OAuthTokensRevoked" },
);
export type TokensRevoked = Static<typeof TokensRevoked>;

export const AgentParams = Type.Object({ agent_id: Id("Agent Id", "Agent ID") });
export const ConnectionParams = Type.Object({ agent_id: Id("Agent Id", "Agent ID"), connection_id: Uuid("Connection Id") });

export const AgentConnectionResponse = Type.Object(
  {
    id: Type.String({ title: "Id" }),
    agent_id: Type.String({ title: "Agent Id" }),
    oauth_token_id: Type.String({ title: "Oauth Token Id" }),
    provider_id: Type.String({ title: "Provider Id" }),
    provider_account_label: NullableString({ title: "Provider Account Label" }),
    scopes: Type.Array(Type.String(), { title: "Scopes" }),
    expires_at: NullableString({ format: "date-time", title: "Expires At" }),
    created_by: Type.String({ title: "Created By" }),
    created_at: Type.String({ format: "date-time", title: "Created At" }),
  },
  { title: "AgentConnectionResponse" },
);
export type AgentConnectionResponse = Static<typeof AgentConnectionResponse>;

export const AgentConnectionListResponse = Type.Object(
  { data: Type.Array(AgentConnectionResponse, { title: "Data" }) },
  { title: "AgentConnectionListResponse" },
);

export const CreateAgentConnectionRequest = Type.Object(
  { oauth_token_id: Uuid("Oauth Token Id") },
  { additionalProperties: false, title: "CreateAgentConnectionRequest" },
);
export type CreateAgentConnectionRequest = Static<typeof CreateAgentConnectionRequest>;
