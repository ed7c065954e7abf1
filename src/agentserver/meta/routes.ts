import { Type } from "@sinclair/typebox";
import type { HttpApp } from "../../http/server.ts";
import { LANGGRAPH_JS_VERSION } from "../../config/version.ts";
import type { Database } from "../../storage/database.ts";

interface ServerInfo {
  version: string;
  graphIds: string[];
  storage: "pglite" | "postgres";
  db: Pick<Database, "query">;
}

/** A database that does not answer within this long fails the check. */
const DB_CHECK_TIMEOUT_MS = 5_000;

const OK_QUERY = Type.Object({
  check_db: Type.Optional(Type.Integer({ enum: [0, 1], default: 0, description: "Whether to check database connectivity (0=false, 1=true)" })),
});

/** Health and server facts; open even when an API key is required. */
export function registerMetaRoutes(app: HttpApp, info: ServerInfo): void {
  app.get(
    "/ok",
    {
      schema: { tags: ["System"], querystring: OK_QUERY, response: { 200: Type.Object({ ok: Type.Boolean() }), 500: Type.Object({ detail: Type.String() }) } },
    },
    async (request, reply) => {
      if (request.query.check_db !== 1) return { ok: true };
      const problem = await databaseProblem(info.db);
      if (problem === undefined) return { ok: true };
      request.log.warn({ problem }, "health check: database unreachable");
      return reply.status(500).send({ detail: `database unreachable: ${problem}` });
    },
  );

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

/** Why the database did not answer a trivial query, or undefined when it did. */
async function databaseProblem(db: Pick<Database, "query">): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${DB_CHECK_TIMEOUT_MS / 1000} s`), DB_CHECK_TIMEOUT_MS);
  });
  const answer = db.query("SELECT 1").then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
