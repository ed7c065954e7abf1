import { Type } from "@sinclair/typebox";
import type { HttpApp } from "../../http/server.ts";
import { LANGGRAPH_JS_VERSION } from "../../config/version.ts";

interface ServerInfo {
  version: string;
  graphIds: string[];
  storage: "pglite" | "postgres";
}

/** Health and server facts; open even when an API key is required. */
export function registerMetaRoutes(app: HttpApp, info: ServerInfo): void {
  app.get("/ok", { schema: { tags: ["System"], response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => ({ ok: true }));

  app.get(
    "/info",
    {
      schema: {
        tags: ["System"],
        response: {
          200: Type.Object({
            version: Type.String(),
            langgraph_py_version: Type.String(),
            langgraph_js_version: Type.String(),
            flags: Type.Record(Type.String(), Type.Unknown()),
            metadata: Type.Record(Type.String(), Type.Unknown()),
          }),
        },
      },
    },
    async () => ({
      version: info.version,
      // Clients require langgraph_py_version; this server runs LangGraph.js and reports
      // that library's version in both fields.
      langgraph_py_version: LANGGRAPH_JS_VERSION,
      langgraph_js_version: LANGGRAPH_JS_VERSION,
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      metadata: { server: "slipway", storage: info.storage, graphs: info.graphIds },
    }),
  );
}
