import type { GithubIntegration, GithubRepository, InstallIntegrationRequest } from "../controlplane/integrations/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v1/integrations: git hosts the deployments build from. */
export function integrationsApi(http: Transport) {
  return {
    list: () => http.json<GithubIntegration[]>({ method: "GET", path: "/v1/integrations/github/install" }),
    repos: (integrationId: string) =>
      http.json<GithubRepository[]>({ method: "GET", path: `/v1/integrations/github/${encodeURIComponent(integrationId)}/repos` }),
    /** Not retried: the name is unique in the workspace. */
    add: (body: InstallIntegrationRequest) => http.json<GithubIntegration>({ method: "POST", path: "/v1/integrations/github/install", body }),
    delete: (integrationId: string) => http.json<void>({ method: "DELETE", path: `/v1/integrations/github/${encodeURIComponent(integrationId)}` }),
  };
}
