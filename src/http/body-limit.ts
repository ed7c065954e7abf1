import type { IncomingMessage } from "node:http";
import { Transform, type TransformCallback } from "node:stream";
import type { FastifyInstance } from "fastify";
import { SlipwayError } from "./errors.ts";

/**
 * Every route's body limit (the server's `bodyLimit`, or the route's own), held for every
 * reader of the body and not only for Fastify's parsers. Fastify counts the bytes its own
 * JSON and text parsers read, but a `preParsing` hook (the push webhook keeps the raw
 * bytes for their signature) or a stream parser (uploads) reads the request itself and
 * was held to nothing: a 300 MB webhook was read whole before its 413.
 *
 * - A `Content-Length` over the limit is refused before a byte is read.
 * - A body without one (chunked) is counted as it streams in, and refused at the first
 *   byte past the limit: whoever reads it gets the 413 as an error and stops.
 *
 * What is left of a refused body is read and dropped as it comes, never kept (Node's own
 * rule for a body nobody reads): closing the connection at once instead would reset it
 * under a client still sending, which then loses the 413 it was sent.
 */
const BODYLESS = new Set(["GET", "HEAD", "TRACE"]);

export function installBodyLimit(app: FastifyInstance): void {
  const serverLimit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  app.addHook("preParsing", (request, _reply, payload, done) => {
    const limit = request.routeOptions.bodyLimit ?? serverLimit;
    const declared = request.headers["content-length"];
    if (declared !== undefined) {
      // Node's parser delivers no more than Content-Length bytes: the number is the bound.
      return Number(declared) > limit ? done(tooLarge(limit)) : done(null, payload);
    }
    // GET, HEAD and TRACE bodies are never read (Node drops them): nothing to count.
    if (request.headers["transfer-encoding"] === undefined || BODYLESS.has(request.method)) return done(null, payload);
    done(null, countedBody(payload, limit));
  });
}

export function tooLarge(limit: number): SlipwayError {
  return new SlipwayError("payload_too_large", `The request body is larger than this route's limit of ${describeBytes(limit)}.`);
}

function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`;
}

/** `payload` as it streams, failing with a 413 at the first byte past `limit`. */
function countedBody(payload: IncomingMessage | NodeJS.ReadableStream, limit: number): Transform {
  let received = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      received += chunk.length;
      if (received <= limit) return callback(null, chunk);
      // Whoever reads stops here; the rest of the body is dropped as it arrives.
      payload.unpipe(counted);
      payload.resume();
      callback(tooLarge(limit));
    },
  });
  payload.on("error", (error) => counted.destroy(error));
  payload.pipe(counted);
  return counted;
}
