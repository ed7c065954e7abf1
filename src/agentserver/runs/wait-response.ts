import type { FastifyReply } from "fastify";
import type { RunCreate } from "./schemas.ts";
import type { RunRow } from "./repository.ts";
import type { RunService } from "./service.ts";

/**
 * Creates a run and answers with what a /wait call returns: the run's final values,
 * or `{"__error__": {...}}` when the run failed (the SDK raises on it). A client that
 * disconnects first cancels the run when it was created with on_disconnect "cancel".
 */
export async function createAndWaitResponse(
  reply: FastifyReply,
  runs: RunService,
  create: { threadId: string | null; body: RunCreate; defaults: { onDisconnect: "cancel" | "continue" } },
  runPath: (run: RunRow) => string,
): Promise<unknown> {
  const abort = new AbortController();
  const { run, ended } = await runs.createAndWait(create.threadId, create.body, create.defaults, abort.signal);
  reply.header("Content-Location", runPath(run));
  // The response closing before we answered means the client left.
  const onClose = () => {
    if (!reply.raw.writableEnded) abort.abort();
  };
  reply.raw.on("close", onClose);
  if (run.kwargs.on_disconnect === "cancel") {
    abort.signal.addEventListener("abort", () => void runs.cancel(run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch(() => undefined));
  }
  const result = await ended;
  reply.raw.off("close", onClose);
  if (result.status === "error" && result.error) return { __error__: result.error };
  return result.values ?? null;
}
