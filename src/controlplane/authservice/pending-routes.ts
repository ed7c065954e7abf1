import type { FastifyInstance } from "fastify";
import { SlipwayError } from "../../http/errors.ts";
import { Detail } from "../openapi.ts";

/**
 * The parts of the vendor's auth service Slipway has not built yet: the OAuth flows,
 * stored user tokens and agent connections. They exist (so clients get a clear answer
 * instead of a 404) and answer 501 with a detail naming what does work.
 */
interface Pending {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  url: string;
  summary: string;
  operationId: string;
  tag?: string;
  /** Browser redirects from a provider carry no credentials. */
  public?: boolean;
}

const PENDING: Pending[] = [
  { method: "POST", url: "/v2/auth/providers/mcp-discover", summary: "Create Mcp Oauth Provider", operationId: "create_mcp_oauth_provider_v2_auth_providers_mcp_discover_post" },
  { method: "GET", url: "/v2/auth/setup/:provider_id", summary: "Oauth Setup Callback", operationId: "oauth_setup_callback_v2_auth_setup__provider_id__get", public: true },
  { method: "GET", url: "/v2/auth/callback/:provider_id", summary: "Oauth Callback Get", operationId: "oauth_callback_get_v2_auth_callback__provider_id__get", public: true },
  { method: "POST", url: "/v2/auth/callback/:provider_id", summary: "Oauth Callback", operationId: "oauth_callback_v2_auth_callback__provider_id__post" },
  { method: "POST", url: "/v2/auth/authenticate", summary: "Authenticate", operationId: "authenticate_v2_auth_authenticate_post" },
  { method: "GET", url: "/v2/auth/wait/:auth_id", summary: "Wait For Auth Completion", operationId: "wait_for_auth_completion_v2_auth_wait__auth_id__get" },
  { method: "GET", url: "/v2/auth/tokens", summary: "List Oauth Tokens For User", operationId: "list_oauth_tokens_for_user_v2_auth_tokens_get" },
  { method: "DELETE", url: "/v2/auth/tokens", summary: "Delete Oauth Tokens For User", operationId: "delete_oauth_tokens_for_user_v2_auth_tokens_delete" },
  { method: "GET", url: "/v2/auth/tokens/exists", summary: "Check Oauth Token Exists", operationId: "check_oauth_token_exists_v2_auth_tokens_exists_get" },
  { method: "PATCH", url: "/v2/auth/tokens/:token_id/metadata", summary: "Update Token Label", operationId: "update_token_label_v2_auth_tokens__token_id__metadata_patch" },
  { method: "DELETE", url: "/v2/auth/tokens/:token_id", summary: "Delete Single Oauth Token", operationId: "delete_single_oauth_token_v2_auth_tokens__token_id__delete" },
  { method: "GET", url: "/v2/auth/tokens/workspace/slack/exists", summary: "Check Workspace Slack Tokens Exist", operationId: "check_workspace_slack_tokens_exist_v2_auth_tokens_workspace_slack_exists_get" },
  { method: "DELETE", url: "/v2/auth/tokens/workspace/slack", summary: "Revoke All Slack Tokens For Workspace", operationId: "revoke_all_slack_tokens_for_workspace_v2_auth_tokens_workspace_slack_delete" },
  { method: "GET", url: "/v2/auth/agents/:agent_id/connections", summary: "List Connections", operationId: "list_connections_v2_auth_agents__agent_id__connections_get", tag: "Agent Connections (v2)" },
  { method: "POST", url: "/v2/auth/agents/:agent_id/connections", summary: "Create Connection", operationId: "create_connection_v2_auth_agents__agent_id__connections_post", tag: "Agent Connections (v2)" },
  { method: "DELETE", url: "/v2/auth/agents/:agent_id/connections/:connection_id", summary: "Remove Connection", operationId: "remove_connection_v2_auth_agents__agent_id__connections__connection_id__delete", tag: "Agent Connections (v2)" },
];

export function registerPendingAuthRoutes(app: FastifyInstance): void {
  for (const route of PENDING) {
    app.route({
      method: route.method,
      url: route.url,
      config: { public: route.public ?? false },
      schema: {
        tags: [route.tag ?? "Auth Service (v2)"],
        summary: route.summary,
        description: "Not implemented yet in Slipway: answers 501. OAuth provider configuration (/v2/auth/providers) is available.",
        operationId: route.operationId,
        ...(route.public ? { security: [] } : {}),
        response: { 501: Detail },
      },
      handler: async () => {
        throw new SlipwayError(
          "not_implemented",
          `${route.summary} (${route.method} ${route.url.replaceAll(/:([a-z_]+)/g, "{$1}")}) is not implemented in this Slipway release; ` +
            "OAuth provider configuration (/v2/auth/providers) is",
        );
      },
    });
  }
}
