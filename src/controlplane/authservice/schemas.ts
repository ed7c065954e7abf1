import { Type, type Static } from "@sinclair/typebox";
import { NullableBoolean, NullableString, NullableStringEnum, StringEnum } from "../schema-types.ts";

/** Wire shapes of the auth service's OAuth provider configuration (v2), after the vendor's. */

const URL_RULES = { minLength: 1, maxLength: 2048, pattern: "^https?://[^\\s]+$" };
const HttpUrl = (title: string) => Type.String({ ...URL_RULES, title });
const CHALLENGE_METHODS = ["S256", "plain"] as const;

export const OAuthProviderResponse = Type.Object(
  {
    id: Type.String({ title: "Id" }),
    organization_id: Type.String({ title: "Organization Id" }),
    provider_id: Type.String({ title: "Provider Id" }),
    name: Type.String({ title: "Name" }),
    client_id: Type.String({ title: "Client Id" }),
    auth_url: Type.String({ title: "Auth Url" }),
    token_url: Type.String({ title: "Token Url" }),
    uses_pkce: Type.Boolean({ title: "Uses Pkce" }),
    code_challenge_method: Type.Union([Type.String(), Type.Null()], { title: "Code Challenge Method" }),
    provider_type: Type.Union([Type.String(), Type.Null()], { title: "Provider Type" }),
    mcp_server_url: Type.Union([Type.String(), Type.Null()], { title: "Mcp Server Url" }),
    token_endpoint_auth_method: Type.String({ title: "Token Endpoint Auth Method" }),
    is_dynamic_client: Type.Boolean({ title: "Is Dynamic Client" }),
    created_at: Type.String({ format: "date-time", title: "Created At" }),
    updated_at: Type.String({ format: "date-time", title: "Updated At" }),
  },
  { title: "OAuthProviderResponse", description: "An OAuth provider. The client secret is never returned." },
);
export type OAuthProviderResponse = Static<typeof OAuthProviderResponse>;

export const OAuthProviderCreateRequest = Type.Object(
  {
    provider_id: Type.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]*$", title: "Provider Id" }),
    name: Type.String({ minLength: 1, maxLength: 200, title: "Name" }),
    client_id: Type.String({ minLength: 1, maxLength: 1024, title: "Client Id" }),
    client_secret: Type.Optional(NullableString({ maxLength: 4096, title: "Client Secret" })),
    auth_url: HttpUrl("Auth Url"),
    token_url: HttpUrl("Token Url"),
    uses_pkce: Type.Optional(Type.Boolean({ default: false, title: "Uses Pkce" })),
    code_challenge_method: Type.Optional(StringEnum(CHALLENGE_METHODS, { default: "S256", title: "Code Challenge Method" })),
    provider_type: Type.Optional(NullableStringEnum(["microsoft", "salesforce", "slack"], { title: "Provider Type" })),
    token_endpoint_auth_method: Type.Optional(
      StringEnum(["none", "client_secret_basic", "client_secret_post"], { default: "client_secret_post", title: "Token Endpoint Auth Method" }),
    ),
  },
  { additionalProperties: false, title: "OAuthProviderCreateRequest" },
);
export type OAuthProviderCreateRequest = Static<typeof OAuthProviderCreateRequest>;

export const OAuthProviderUpdateRequest = Type.Object(
  {
    name: Type.Optional(NullableString({ minLength: 1, maxLength: 200, title: "Name" })),
    client_id: Type.Optional(NullableString({ minLength: 1, maxLength: 1024, title: "Client Id" })),
    client_secret: Type.Optional(NullableString({ maxLength: 4096, title: "Client Secret" })),
    auth_url: Type.Optional(NullableString({ ...URL_RULES, title: "Auth Url" })),
    token_url: Type.Optional(NullableString({ ...URL_RULES, title: "Token Url" })),
    uses_pkce: Type.Optional(NullableBoolean({ title: "Uses Pkce" })),
    code_challenge_method: Type.Optional(NullableStringEnum(CHALLENGE_METHODS, { title: "Code Challenge Method" })),
  },
  { additionalProperties: false, title: "OAuthProviderUpdateRequest", description: "Fields left out or null keep their value." },
);
export type OAuthProviderUpdateRequest = Static<typeof OAuthProviderUpdateRequest>;

export const ProviderParams = Type.Object(
  { provider_id: Type.String({ minLength: 1, maxLength: 200, title: "Provider Id", description: "The provider's `provider_id` or its `id`." }) },
  { additionalProperties: false },
);
export type ProviderParams = Static<typeof ProviderParams>;

export const DeletedProvider = Type.Object({ id: Type.String(), provider_id: Type.String(), deleted: Type.Boolean() });
