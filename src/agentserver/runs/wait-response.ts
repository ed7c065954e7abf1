import type { FastifyReply, FastifyRequest } from "fastify";
import { cancelOnDisconnect, clientGone } from "../route-helpers.ts";
import type { RunCreate } from "./schemas.ts";
import type { RunRow } from "./repository.ts";
import type { RunService } from "./service.ts";

/**
 * Creates a run and answers with what a /wait call returns: the run's final values,
 * or `{"__error__": {...}}` when the run failed (the SDK raises on it). A client that
 * disconnects first cancels the run when it was created with on_disconnect "cancel".
 */
export async function createAndWaitResponse(
  request: FastifyRequest,
  reply: FastifyReply,
  runs: RunService,
  create: { threadId: string | null; body: RunCreate; defaults: { onDisconnect: "cancel" | "continue" } },
  runPath: (run: RunRow) => string,
): Promise<unknown> {
  const gone = clientGone(reply);
  const { run, ended } = await runs.createAndWait(create.threadId, create.body, create.defaults, gone);
  reply.header("Content-Location", runPath(run));
  if (run.kwargs.on_disconnect === "cancel") gone.addEventListener("abort", cancelOnDisconnect(runs, run, request.log));
  const result = await ended;
  if (result.status === "error" && result.error) return { __error__: result.error };
  return result.values ?? null;
}
