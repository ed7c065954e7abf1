import type { Static } from "@sinclair/typebox";
import type { DeletedProvider, OAuthProviderCreateRequest, OAuthProviderResponse, OAuthProviderUpdateRequest } from "../controlplane/authservice/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v2/auth/providers: OAuth provider configuration of the auth service. */
export function authProvidersApi(http: Transport) {
  const at = (id: string) => `/v2/auth/providers/${encodeURIComponent(id)}`;
  return {
    list: () => http.json<OAuthProviderResponse[]>({ method: "GET", path: "/v2/auth/providers" }),
    get: (providerId: string) => http.json<OAuthProviderResponse>({ method: "GET", path: at(providerId) }),
    /** Not retried: provider_id is unique (409 on a repeat). */
    create: (body: OAuthProviderCreateRequest) => http.json<OAuthProviderResponse>({ method: "POST", path: "/v2/auth/providers", body }),
    /** Safe to repeat: it sets fields to the values given. */
    update: (providerId: string, body: OAuthProviderUpdateRequest) =>
      http.json<OAuthProviderResponse>({ method: "PATCH", path: at(providerId), body, idempotent: true }),
    delete: (providerId: string) => http.json<Static<typeof DeletedProvider>>({ method: "DELETE", path: at(providerId) }),
  };
}
