import type { Server } from "node:http";

/**
 * Fastify sets its timeouts (keep-alive 72 s, request, connection, requests per socket)
 * only on a server it makes itself; a `serverFactory`'s server keeps Node's, whose 5 s
 * keep-alive is short enough that a client reusing an idle connection can meet the
 * server closing it (ECONNRESET) whenever the server's event loop is late. Both of our
 * factories call this with the options Fastify hands them.
 */
export function applyFastifyTimeouts(server: Server, options: unknown): Server {
  const timeouts = options as { keepAliveTimeout?: number; requestTimeout?: number; connectionTimeout?: number; maxRequestsPerSocket?: number };
  server.keepAliveTimeout = timeouts.keepAliveTimeout ?? server.keepAliveTimeout;
  server.requestTimeout = timeouts.requestTimeout ?? server.requestTimeout;
  server.setTimeout(timeouts.connectionTimeout ?? 0);
  if ((timeouts.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = timeouts.maxRequestsPerSocket!;
  return server;
}
