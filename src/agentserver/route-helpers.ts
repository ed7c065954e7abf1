import { Type } from "@sinclair/typebox";
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import { SlipwayError } from "../http/errors.ts";

/** What the agent server answers on an error: `{"detail": "..."}`, as the vendor's server does. */
export const ErrorResponse = Type.Object(
  { detail: Type.String({ description: "Human-readable error message" }) },
  { title: "ErrorResponse", description: "Error response returned from the server" },
);

/** The error responses of a route, by status code. */
export function errorResponses<C extends number>(...codes: C[]): Record<C, typeof ErrorResponse> {
  return Object.fromEntries(codes.map((code) => [code, ErrorResponse])) as Record<C, typeof ErrorResponse>;
}

/** The 200 response of a route that answers with server-sent events (see http/sse.ts). */
export const sseResponse = {
  200: { description: "Server-sent events", content: { "text/event-stream": { schema: Type.String() } } },
} as const;

/**
 * Aborted when the client closes the connection before the reply was sent: a waiting
 * handler gives up instead of holding resources for nobody.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) gone.abort();
  };
  reply.raw.on("close", onClose);
  return gone.signal;
}

interface CancellableRun {
  thread_id: string;
  run_id: string;
}

/**
 * Returns what stops `run` when its client leaves (on_disconnect "cancel", or a join's
 * cancel_on_disconnect). A run that ended meanwhile is no error; anything else is logged.
 */
export function cancelOnDisconnect(
  runs: { cancel(threadId: string, runId: string, options: { wait: false; action: "interrupt" }): Promise<void> },
  run: CancellableRun,
  log: Pick<FastifyBaseLogger, "warn">,
): () => void {
  return () =>
    void runs.cancel(run.thread_id, run.run_id, { wait: false, action: "interrupt" }).catch((error) => {
      if (error instanceof SlipwayError && (error.code === "conflict" || error.code === "not_found")) return;
      log.warn({ err: error, run_id: run.run_id }, "cancelling the run of a client that left failed");
    });
}

/**
 * The vendor's pagination headers of a search: with more results after this page,
 * `X-Pagination-Next` (the next page's offset) and `X-Pagination-Total` one past it ("at
 * least this many"); on the last page, `X-Pagination-Total` counts up to its end.
 */
export function setPaginationHeaders(reply: FastifyReply, page: { offset: number; count: number; next?: number }): void {
  if (page.next === undefined) {
    reply.header("X-Pagination-Total", String(page.offset + page.count));
    return;
  }
  reply.header("X-Pagination-Next", String(page.next));
  reply.header("X-Pagination-Total", String(page.next + 1));
}
