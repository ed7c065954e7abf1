import { Type } from "@sinclair/typebox";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { DETAIL_RESPONSES } from "../openapi.ts";
import { GithubIntegration, GithubRepository, InstallIntegrationRequest, IntegrationIdParams } from "./schemas.ts";

const TAGS = ["Integrations (v1)"];

/** Integrations (v1): the vendor's GitHub listing routes, plus install/delete for any git host. */
export const registerIntegrationRoutes: RegisterRoutes = (app, { integrations }) => {
  app.get(
    "/v1/integrations/github/install",
    {
      schema: {
        tags: TAGS,
        summary: "List GitHub Integrations",
        description: "List the git host integrations of the workspace.",
        operationId: "list_github_integrations_v1_integrations_github_install_get",
        response: { 200: Type.Array(GithubIntegration), ...DETAIL_RESPONSES },
      },
    },
    async (request) => integrations.list(requireTenant(request).workspaceId),
  );

  app.post(
    "/v1/integrations/github/install",
    {
      schema: {
        tags: TAGS,
        summary: "Install Git Host Integration",
        description:
          "Register a git host for the workspace (Slipway extension; a self-hosted install has no GitHub App). " +
          "`token` and `webhook_secret` are sealed at rest and never returned. A host that is, or resolves to, a loopback, " +
          "private, link-local or metadata address is refused (422) unless the operator allows it (`--allow-private-git-hosts`).",
        operationId: "install_git_integration_v1_integrations_github_install_post",
        body: InstallIntegrationRequest,
        response: { 201: GithubIntegration, ...DETAIL_RESPONSES },
      },
    },
    async (request, reply) => {
      const created = await integrations.install(requireTenant(request).workspaceId, request.body);
      return reply.status(201).send(created);
    },
  );

  app.get(
    "/v1/integrations/github/:integration_id/repos",
    {
      schema: {
        tags: TAGS,
        summary: "List GitHub Repositories",
        description:
          "List the repositories the git host exposes to the integration. Hosts without a listing API " +
          "(git://, ssh://, plain smart-HTTP servers) answer an empty list: deploy them by `repo_url`.",
        operationId: "list_github_repositories_v1_integrations_github__integration_id__repos_get",
        params: IntegrationIdParams,
        response: { 200: Type.Array(GithubRepository), ...DETAIL_RESPONSES },
      },
    },
    async (request) => integrations.listRepositories(requireTenant(request).workspaceId, request.params.integration_id),
  );

  app.delete(
    "/v1/integrations/github/:integration_id",
    {
      schema: {
        tags: TAGS,
        summary: "Delete Git Host Integration",
        description: "Remove an integration and its sealed secrets (Slipway extension).",
        operationId: "delete_git_integration_v1_integrations_github__integration_id__delete",
        params: IntegrationIdParams,
        response: { 204: Type.Null(), ...DETAIL_RESPONSES },
      },
    },
    async (request, reply) => {
      await integrations.remove(requireTenant(request).workspaceId, request.params.integration_id);
      return reply.status(204).send(null);
    },
  );

  // Forge integrations are a vendor-cloud feature; a self-hosted install has none.
  app.get(
    "/v1/integrations/forge/github/install",
    {
      schema: {
        tags: TAGS,
        summary: "List Forge GitHub Integrations",
        description: "Always empty on a self-hosted install (Forge is a vendor-cloud feature).",
        operationId: "list_forge_github_integrations_v1_integrations_forge_github_install_get",
        response: { 200: Type.Array(GithubIntegration), ...DETAIL_RESPONSES },
      },
    },
    async (request) => {
      requireTenant(request);
      return [];
    },
  );

  app.get(
    "/v1/integrations/forge/github/:integration_id/repos",
    {
      schema: {
        tags: TAGS,
        summary: "List Forge GitHub Repositories",
        description: "No Forge integration exists on a self-hosted install: any id is 404.",
        operationId: "list_forge_github_repositories_v1_integrations_forge_github__integration_id__repos_get",
        params: IntegrationIdParams,
        response: { 200: Type.Array(GithubRepository), ...DETAIL_RESPONSES },
      },
    },
    async (request, reply) => {
      requireTenant(request);
      return reply.status(404).send({ detail: `Forge integration '${request.params.integration_id}' not found` });
    },
  );
};
