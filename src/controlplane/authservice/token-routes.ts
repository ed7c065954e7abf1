import { Type } from "@sinclair/typebox";
import { requireTenant, type RegisterRoutes } from "../context.ts";
import { DETAIL_RESPONSES } from "../openapi.ts";
import {
  AgentConnectionListResponse,
  AgentConnectionResponse,
  AgentParams,
  ConnectionParams,
  CreateAgentConnectionRequest,
  OAuthTokenStatusResponse,
  OAuthTokenSummary,
  OAuthTokenUpdateRequest,
  RequiredProviderQuery,
  TokenParams,
  TokensQuery,
  TokensRevoked,
} from "./flow-schemas.ts";

const TAGS = ["Auth Service (v2)"];
const CONNECTION_TAGS = ["Agent Connections (v2)"];
const UNAVAILABLE = { 503: DETAIL_RESPONSES[404] };

/** Stored OAuth tokens (summaries only, never the token) and agent connections. */
export const registerAuthTokenRoutes: RegisterRoutes = (app, { oauthTokens: tokens }) => {
  app.get(
    "/v2/auth/tokens",
    {
      schema: {
        tags: TAGS,
        summary: "List Oauth Tokens For User",
        description: "List the calling user's tokens for a provider (all providers without `provider_id`).",
        operationId: "list_oauth_tokens_for_user_v2_auth_tokens_get",
        querystring: TokensQuery,
        response: { 200: Type.Array(OAuthTokenSummary), ...DETAIL_RESPONSES },
      },
    },
    async (request) => tokens.list(requireTenant(request), request.query.provider_id),
  );

  app.delete(
    "/v2/auth/tokens",
    {
      schema: {
        tags: TAGS,
        summary: "Delete Oauth Tokens For User",
        description:
          "Delete all tokens for the current user for the given provider (across agents), each revoked at the provider first when it names a revocation endpoint.",
        operationId: "delete_oauth_tokens_for_user_v2_auth_tokens_delete",
        querystring: RequiredProviderQuery,
        response: { 200: TokensRevoked, ...DETAIL_RESPONSES, ...UNAVAILABLE },
      },
    },
    async (request) => tokens.deleteForProvider(requireTenant(request), request.query.provider_id),
  );

  app.get(
    "/v2/auth/tokens/exists",
    {
      schema: {
        tags: TAGS,
        summary: "Check Oauth Token Exists",
        description: "Return whether the current user has any tokens for a given provider (across agents).",
        operationId: "check_oauth_token_exists_v2_auth_tokens_exists_get",
        querystring: RequiredProviderQuery,
        response: { 200: OAuthTokenStatusResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => tokens.exists(requireTenant(request), request.query.provider_id),
  );

  app.patch(
    "/v2/auth/tokens/:token_id/metadata",
    {
      schema: {
        tags: TAGS,
        summary: "Update Token Label",
        description: "Update a token's provider_account_label (and whether it is the user's default for its provider). Only the token owner can update.",
        operationId: "update_token_label_v2_auth_tokens__token_id__metadata_patch",
        params: TokenParams,
        body: OAuthTokenUpdateRequest,
        response: { 200: OAuthTokenSummary, ...DETAIL_RESPONSES },
      },
    },
    async (request) => tokens.updateMetadata(requireTenant(request), request.params.token_id, request.body),
  );

  app.delete(
    "/v2/auth/tokens/:token_id",
    {
      schema: {
        tags: TAGS,
        summary: "Delete Single Oauth Token",
        description:
          "Delete a specific OAuth token, revoking it at the provider first (nothing is deleted if the provider cannot be reached: 503). Only the token owner can delete it.",
        operationId: "delete_single_oauth_token_v2_auth_tokens__token_id__delete",
        params: TokenParams,
        response: { 204: Type.Null({ description: "Deleted." }), ...DETAIL_RESPONSES, ...UNAVAILABLE },
      },
    },
    async (request, reply) => {
      await tokens.deleteOne(requireTenant(request), request.params.token_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/v2/auth/tokens/workspace/slack/exists",
    {
      schema: {
        tags: TAGS,
        summary: "Check Workspace Slack Tokens Exist",
        description: "Check if the workspace has any Slack tokens (tokens of providers whose `provider_type` is `slack`).",
        operationId: "check_workspace_slack_tokens_exist_v2_auth_tokens_workspace_slack_exists_get",
        response: { 200: OAuthTokenStatusResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => tokens.slackExists(requireTenant(request)),
  );

  app.delete(
    "/v2/auth/tokens/workspace/slack",
    {
      schema: {
        tags: TAGS,
        summary: "Revoke All Slack Tokens For Workspace",
        description:
          "Revoke ALL Slack tokens for the workspace, at Slack (auth.revoke) and here. Tokens Slack cannot be asked about (unreachable) are kept and the answer is 503.",
        operationId: "revoke_all_slack_tokens_for_workspace_v2_auth_tokens_workspace_slack_delete",
        response: { 200: TokensRevoked, ...DETAIL_RESPONSES, ...UNAVAILABLE },
      },
    },
    async (request) => tokens.revokeSlack(requireTenant(request)),
  );

  app.get(
    "/v2/auth/agents/:agent_id/connections",
    {
      schema: {
        tags: CONNECTION_TAGS,
        summary: "List Connections",
        description: "The OAuth tokens this agent may use.",
        operationId: "list_connections_v2_auth_agents__agent_id__connections_get",
        params: AgentParams,
        response: { 200: AgentConnectionListResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request) => tokens.listConnections(requireTenant(request), request.params.agent_id),
  );

  app.post(
    "/v2/auth/agents/:agent_id/connections",
    {
      schema: {
        tags: CONNECTION_TAGS,
        summary: "Create Connection",
        description: "Let the agent use one of the caller's tokens (404 for a token the caller does not own; 409 when already connected).",
        operationId: "create_connection_v2_auth_agents__agent_id__connections_post",
        params: AgentParams,
        body: CreateAgentConnectionRequest,
        response: { 201: AgentConnectionResponse, ...DETAIL_RESPONSES },
      },
    },
    async (request, reply) => reply.status(201).send(await tokens.connect(requireTenant(request), request.params.agent_id, request.body)),
  );

  app.delete(
    "/v2/auth/agents/:agent_id/connections/:connection_id",
    {
      schema: {
        tags: CONNECTION_TAGS,
        summary: "Remove Connection",
        operationId: "remove_connection_v2_auth_agents__agent_id__connections__connection_id__delete",
        params: ConnectionParams,
        response: { 204: Type.Null({ description: "Removed." }), ...DETAIL_RESPONSES },
      },
    },
    async (request, reply) => {
      await tokens.disconnect(requireTenant(request), request.params.agent_id, request.params.connection_id);
      return reply.status(204).send(null);
    },
  );
};
