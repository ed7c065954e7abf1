import type { FastifyReply, FastifyRequest } from "fastify";
import type { RunRow } from "./repository.ts";
import type { RunService } from "./service.ts";

/**
 * The body of a /wait call: the run's final values, or `{"__error__": {...}}` when
 * the run failed (the SDK raises on it). A client that disconnects first cancels the
 * run when it was created with on_disconnect "cancel".
 */
export async function waitResponse(_request: FastifyRequest, reply: FastifyReply, runs: RunService, run: RunRow, runPath: string): Promise<unknown> {
  reply.header("Content-Location", runPath);
  const abort = new AbortController();
  // The response closing before we answered means the client left.
  const onClose = () => {
    if (!reply.raw.writableEnded) abort.abort();
  };
  reply.raw.on("close", onClose);
  if (run.kwargs.on_disconnect === "cancel") {
    abort.signal.addEventListener("abort", () => void runs.cancel(run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch(() => undefined));
  }
  const result = await runs.waitForEnd(run.run_id, abort.signal);
  reply.raw.off("close", onClose);
  if (result.status === "error" && result.error) return { __error__: result.error };
  return result.values ?? null;
}
