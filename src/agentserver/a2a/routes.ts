import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { SlipwayError, notFound } from "../../http/errors.ts";
import { RpcFault } from "../jsonrpc/envelope.ts";
import type { HttpApp } from "../../http/server.ts";
import { registerJsonRpcScope } from "../jsonrpc/scope.ts";
import { OwnApiRefusal } from "../own-api.ts";
import type { A2aDeps, A2aEndpoint } from "./endpoint.ts";

const tags = ["A2A"];
const RpcResponse = Type.Object(
  {
    jsonrpc: Type.Literal("2.0"),
    id: Type.Union([Type.String(), Type.Number(), Type.Null()]),
    result: Type.Optional(Type.Unknown({ description: "A task, or a task's status or artifact update" })),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })),
  },
  { additionalProperties: true },
);

/**
 * `POST /a2a/{assistant_id}` and the agent cards: at `/.well-known/agent-card.json?assistant_id=`
 * (the vendor's place) and below each assistant's endpoint (where an A2A client given
 * the endpoint's URL looks). The protocol's code loads at its first request (decision 0041).
 */
export function registerA2aRoutes(app: HttpApp, deps: A2aDeps & { mountPrefix: string }): void {
  let endpoint: Promise<A2aEndpoint> | undefined;
  const load = () => (endpoint ??= import("./endpoint.ts").then(({ A2aEndpoint }) => new A2aEndpoint(deps)));

  registerJsonRpcScope(app, (scope) => {
    scope.post(
      "/a2a/:assistant_id",
      {
        schema: {
          tags,
          summary: "A2A JSON-RPC",
          description:
            "The A2A protocol over JSON-RPC 2.0: message/send, message/stream (SSE), tasks/get, tasks/cancel. A context is a thread; a task is a run.",
          params: Type.Object({ assistant_id: Type.String({ description: "The ID of the assistant to communicate with (or its graph id)" }) }),
          body: Type.Unknown({ description: "A JSON-RPC 2.0 request." }),
          response: {
            200: {
              description: "JSON-RPC response; for message/stream an SSE stream of JSON-RPC responses.",
              content: { "application/json": { schema: RpcResponse } },
            },
          },
        },
      },
      async (request, reply) => {
        await (await load()).post(request, reply, request.params.assistant_id);
        return reply;
      },
    );
  });

  const card = async (request: FastifyRequest, assistantId: string) => {
    const { agentCard } = await import("./card.ts");
    try {
      return agentCard(request, await (await load()).assistant(request, assistantId), deps.mountPrefix);
    } catch (error) {
      if (error instanceof RpcFault) throw notFound(`Assistant ${assistantId.slice(0, 100)} not found`);
      if (error instanceof OwnApiRefusal && (error.status === 401 || error.status === 403))
        throw new SlipwayError(error.status === 401 ? "unauthorized" : "forbidden", error.detail);
      // Any other refusal of the lookup (an id no route takes, such as one too long for a path) finds no assistant.
      if (error instanceof OwnApiRefusal && error.status >= 400 && error.status < 500) throw notFound(`Assistant ${assistantId.slice(0, 100)} not found`);
      throw error;
    }
  };
  const cardResponse = { 200: { description: "The assistant's A2A agent card.", content: { "application/json": { schema: Type.Unknown() } } } };
  app.get(
    "/.well-known/agent-card.json",
    { schema: { tags, summary: "A2A Agent Card", querystring: Type.Object({ assistant_id: Type.String() }), response: cardResponse } },
    async (request) => card(request, request.query.assistant_id),
  );
  app.get(
    "/a2a/:assistant_id/.well-known/agent-card.json",
    { schema: { hide: true, params: Type.Object({ assistant_id: Type.String() }), response: cardResponse } },
    async (request) => card(request, request.params.assistant_id),
  );
}
