import type { FastifyInstance } from "fastify";
import { Type } from "@sinclair/typebox";

export interface ServerInfo {
  version: string;
  graphIds: string[];
  storage: "pglite" | "postgres";
}

/** Health and server facts; open even when an API key is required. */
export function registerMetaRoutes(app: FastifyInstance, info: ServerInfo): void {
  app.get("/ok", { schema: { tags: ["System"], response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => ({ ok: true }));

  app.get(
    "/info",
    {
      schema: {
        tags: ["System"],
        response: {
          200: Type.Object({
            version: Type.String(),
            langgraph_js_version: Type.Optional(Type.String()),
            flags: Type.Record(Type.String(), Type.Unknown()),
            metadata: Type.Record(Type.String(), Type.Unknown()),
          }),
        },
      },
    },
    async () => ({
      version: info.version,
      flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false },
      metadata: { server: "slipway", storage: info.storage, graphs: info.graphIds },
    }),
  );
}
