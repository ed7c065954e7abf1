import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { RegisterRoutes } from "../context.ts";
import { errorResponses, Uuid } from "../deployments/wire.ts";

const Params = Type.Object({ integration_id: Uuid() });

declare module "fastify" {
  interface FastifyRequest {
    /** The body's bytes as sent, kept by the push webhook's preParsing hook (only that route sets it). */
    rawBody?: Buffer;
  }
}

/** POST /v1/integrations/github/{integration_id}/webhook: push events from the git host. */
export const registerWebhookRoutes: RegisterRoutes = (app, { webhooks }) => {
  app.post(
    "/v1/integrations/github/:integration_id/webhook",
    {
      config: { public: true },
      // The signature covers the bytes as sent: keep them before the JSON parser reads them.
      // The server's hook (http/body-limit.ts) ran first: an oversized body fails here with its 413.
      preParsing: async (request, _reply, payload) => {
        const chunks: Buffer[] = [];
        for await (const chunk of payload) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks);
        request.rawBody = raw;
        return Readable.from([raw]);
      },
      schema: {
        tags: ["Integrations (v1)"],
        summary: "Receive Push Webhook",
        operationId: "receive_push_webhook_v1_integrations_github__integration_id__webhook_post",
        description:
          "Point the git host's push webhook here (content type application/json, with the integration's webhook secret). " +
          "Deployments with build_on_push on the pushed repository and branch get a revision at the pushed commit. " +
          "Other events (ping, ...) are acknowledged and ignored.",
        params: Params,
        response: {
          202: Type.Object({ revisions: Type.Array(Type.Object({ deployment_id: Uuid(), revision_id: Uuid() })) }, { title: "PushReceived" }),
          ...errorResponses(400, 401, 422),
        },
      },
    },
    async (request, reply) => {
      const { integration_id } = request.params;
      const event = String(request.headers["x-github-event"] ?? request.headers["x-gitea-event"] ?? "push");
      const signature = request.headers["x-hub-signature-256"];
      const raw = request.rawBody ?? Buffer.alloc(0);
      const result = await webhooks.receivePush({ integrationId: integration_id, event, raw, signature: Array.isArray(signature) ? signature[0] : signature });
      return reply.status(202).send(result);
    },
  );
};
