import type { FastifyInstance } from "fastify";
import { endOpenStreams } from "./sse.ts";

/**
 * Closes a Fastify server without letting one client hold the shutdown: event streams end
 * at once (their clients join again elsewhere), idle connections close, and requests still
 * running `graceMs` later are cut off. Without the cut-off, a connection whose request was
 * answered before its body was read kept `slipway up` from exiting for 70 s.
 */
export async function closeServer(app: FastifyInstance, graceMs: number): Promise<void> {
  endOpenStreams(app.server);
  const cutOff = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cutOff);
  }
}
