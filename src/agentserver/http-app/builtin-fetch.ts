import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { FastifyInstance, HTTPMethods } from "fastify";
import type { FetchHandler } from "./load-app.ts";

/** Headers of one hop: the injected request carries its body as a stream of its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"]);

/**
 * The built-in routes as a fetch handler, for what the project's app hands on: the
 * request (possibly changed by the app's middleware) goes through Fastify in process
 * (`inject`, every hook included), and its reply comes back as a streamed Response, so
 * that SSE streams flow as they are written. When the client goes away (the request's
 * signal), the injected reply is closed, which is what the stream and /wait routes watch.
 */
export function builtInFetch(app: FastifyInstance, remoteAddressOf: (request: Request) => string | undefined): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) headers[name] = value;
    });
    let payload: Readable | undefined;
    if (request.body) {
      payload = Readable.fromWeb(request.body as NodeReadableStream<Uint8Array>);
      headers["transfer-encoding"] = "chunked";
    }
    const reply = await app.inject({
      method: request.method as HTTPMethods,
      url: url.pathname + url.search,
      headers,
      payload,
      remoteAddress: remoteAddressOf(request),
      payloadAsStream: true,
    });
    const raw = reply.raw.res;
    const closeReply = () => raw.destroy();
    if (request.signal.aborted) closeReply();
    else request.signal.addEventListener("abort", closeReply, { once: true });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(item));
    }
    const bodyless = request.method === "HEAD" || reply.statusCode === 204 || reply.statusCode === 304;
    const body = bodyless ? null : (Readable.toWeb(reply.stream()) as ReadableStream<Uint8Array>);
    return new Response(body, { status: reply.statusCode, statusText: reply.statusMessage, headers: responseHeaders });
  };
}
