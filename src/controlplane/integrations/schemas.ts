import { Type, type Static } from "@sinclair/typebox";
import { NullableString } from "../schema-types.ts";

/** Wire shapes of the integrations group (v1): one schema each for validation, types and OpenAPI. */

export const GithubIntegration = Type.Object(
  {
    id: Type.String({ format: "uuid", title: "ID", description: "Integration ID. Use it as `source_config.integration_id` of `POST /v2/deployments`." }),
    installation_id: Type.Integer({ title: "Installation ID", description: "Installation number (GitHub App installation id for GitHub)." }),
    name: Type.String({ title: "Name", description: "Account or host name of the integration." }),
    base_url: Type.String({ description: "Base URL of the git host (Slipway extension)." }),
    created_at: Type.String({ format: "date-time" }),
  },
  { title: "GithubIntegration", description: "Metadata for a git host integration. Tokens and webhook secrets are never returned." },
);
export type GithubIntegration = Static<typeof GithubIntegration>;

export const GithubRepository = Type.Object(
  {
    host_integration_id: Type.String({ format: "uuid", title: "GitHub Integration ID" }),
    id: Type.Integer({ title: "ID" }),
    name: Type.String({ title: "Name" }),
    owner: Type.String({ title: "Owner" }),
    url: Type.String({ title: "URL", description: "Clone URL; use it as `source_config.repo_url`." }),
    default_branch: Type.String({ title: "Default Branch" }),
  },
  { title: "GithubRepository", description: "Metadata for a repository of an integration." },
);
export type GithubRepository = Static<typeof GithubRepository>;

const OptionalSecret = Type.Optional(NullableString({ minLength: 1, maxLength: 4096 }));

export const InstallIntegrationRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: "A name for the integration, unique in the workspace." }),
    base_url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "Base URL of the git host: https://github.com/, https://git.example.com/, git://127.0.0.1:9418/, ssh://git@host/.",
    }),
    token: OptionalSecret,
    webhook_secret: OptionalSecret,
  },
  {
    additionalProperties: false,
    title: "InstallIntegrationRequest",
    description: "Registers a git host (Slipway extension: a self-hosted install has no GitHub App). The token and secret are sealed at rest.",
  },
);
export type InstallIntegrationRequest = Static<typeof InstallIntegrationRequest>;

export const IntegrationIdParams = Type.Object({ integration_id: Type.String({ format: "uuid", title: "Integration ID" }) }, { additionalProperties: false });
export type IntegrationIdParams = Static<typeof IntegrationIdParams>;
