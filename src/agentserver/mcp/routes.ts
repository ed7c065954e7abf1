import { Type } from "@sinclair/typebox";
import type { HttpApp } from "../../http/server.ts";
import { registerJsonRpcScope } from "../jsonrpc/scope.ts";
import type { McpDeps, McpEndpoint } from "./endpoint.ts";

const tags = ["MCP"];
const JsonRpcBody = Type.Unknown({ description: "A JSON-RPC 2.0 request, notification, or response object." });

/**
 * `/mcp/` (and `/mcp`): the MCP endpoint. Its code is loaded at the first request, so
 * a server whose clients never speak MCP does not pay for it at start (decision 0041).
 */
export function registerMcpRoutes(app: HttpApp, deps: McpDeps): void {
  let endpoint: Promise<McpEndpoint> | undefined;
  const load = () => (endpoint ??= import("./endpoint.ts").then(({ McpEndpoint }) => new McpEndpoint(deps)));
  registerJsonRpcScope(app, (scope) => {
    for (const url of ["/mcp/", "/mcp"]) {
      const hide = url === "/mcp";
      scope.post(
        url,
        {
          schema: {
            hide,
            tags,
            summary: "MCP Post",
            description: "Streamable HTTP transport: one JSON-RPC 2.0 message per request. Each assistant is a tool.",
            body: JsonRpcBody,
            response: {
              200: {
                description: "Successful JSON-RPC response (JSON, or an SSE stream for a tool call with a progress token).",
                content: { "application/json": { schema: Type.Unknown() } },
              },
              202: { description: "Notification or response accepted; no content body.", type: "null" },
            },
          },
        },
        async (request, reply) => (await load()).post(request, reply),
      );
      // No stream of server-initiated messages: 405, as on the vendor's server, which the transport allows.
      scope.get(
        url,
        { schema: { hide, tags, summary: "MCP Get", response: { 405: { description: "GET method not allowed; streaming not supported.", type: "null" } } } },
        async (_request, reply) => reply.status(405).header("allow", "POST, DELETE").send(),
      );
      scope.delete(
        url,
        { schema: { hide, tags, summary: "Terminate Session", response: { 204: { description: "Session ended.", type: "null" } } } },
        async (request, reply) => (await load()).delete(request, reply),
      );
    }
  });
}
