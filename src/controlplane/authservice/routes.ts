import { Type } from "@sinclair/typebox";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { DETAIL_RESPONSES } from "../openapi.ts";
import { registerAuthFlowRoutes } from "./flow-routes.ts";
import { registerAuthTokenRoutes } from "./token-routes.ts";
import { DeletedProvider, OAuthProviderCreateRequest, OAuthProviderResponse, OAuthProviderUpdateRequest, ProviderParams } from "./schemas.ts";

const TAGS = ["Auth Service (v2)"];

/** Auth service (v2): OAuth provider configuration, the OAuth flows, stored tokens and agent connections. */
export const registerAuthServiceRoutes: RegisterRoutes = (app, services) => {
  const providers = services.oauthProviders;
  app.get(
    "/v2/auth/providers",
    {
      schema: {
        tags: TAGS,
        summary: "List Oauth Providers",
        operationId: "list_oauth_providers_v2_auth_providers_get",
        response: { 200: Type.Array(OAuthProviderResponse), ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.list(requireTenant(request)),
  );

  app.post(
    "/v2/auth/providers",
    {
      schema: {
        tags: TAGS,
        summary: "Create Oauth Provider",
        description: "Create a new OAuth provider manually. `provider_id` is unique in the workspace (409 otherwise).",
        operationId: "create_oauth_provider_v2_auth_providers_post",
        body: OAuthProviderCreateRequest,
        response: { 200: OAuthProviderResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.create(requireTenant(request), request.body),
  );

  app.get(
    "/v2/auth/providers/:provider_id",
    {
      schema: {
        tags: TAGS,
        summary: "Get Oauth Provider",
        operationId: "get_oauth_provider_v2_auth_providers__provider_id__get",
        params: ProviderParams,
        response: { 200: OAuthProviderResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.get(requireTenant(request), request.params.provider_id),
  );

  app.patch(
    "/v2/auth/providers/:provider_id",
    {
      schema: {
        tags: TAGS,
        summary: "Update Oauth Provider",
        operationId: "update_oauth_provider_v2_auth_providers__provider_id__patch",
        params: ProviderParams,
        body: OAuthProviderUpdateRequest,
        response: { 200: OAuthProviderResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.update(requireTenant(request), request.params.provider_id, request.body),
  );

  app.delete(
    "/v2/auth/providers/:provider_id",
    {
      schema: {
        tags: TAGS,
        summary: "Delete Oauth Provider",
        operationId: "delete_oauth_provider_v2_auth_providers__provider_id__delete",
        params: ProviderParams,
        response: { 200: DeletedProvider, ...DETAIL_RESPONSES },
      },
    },
    async (request) => providers.remove(requireTenant(request), request.params.provider_id),
  );

  registerAuthFlowRoutes(app, services);
  registerAuthTokenRoutes(app, services);
};
