import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import type { AgentEndpoint } from "./endpoint.ts";

/**
 * Forwards one request to an agent process and sends its answer back: event streams
 * (and any answer of unknown or large size) stream through as they come, unbuffered and
 * uncompressed, with no timeout; a client that goes away closes the upstream request
 * too, so the agent sees the disconnect (on_disconnect).
 *
 * Small answers of known length (most API calls) are collected and sent in one write,
 * head and body together: on loopback every write is a system call that wakes the
 * reader, and that is most of what proxying costs (docs/decisions/0018).
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the two connections' own business. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);

/** Answers up to this size, with a Content-Length, are sent in one write. */
const BUFFERED_MAX_BYTES = 256 * 1024;

export const upstreamAgent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });

export interface ForwardTarget {
  endpoint: AgentEndpoint;
  /** The path and query the client asked for, below the deployment's prefix. */
  path: string;
  /** Replaces whatever credential the client sent. */
  apiKey: string;
  /** The prefix the client used (X-Forwarded-Prefix). */
  prefix: string;
}

export function forward(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, onDone: () => void): void {
  const { endpoint } = target;
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    onDone();
  };
  const upstream = request(
    {
      socketPath: endpoint.socketPath,
      host: endpoint.host,
      port: endpoint.port,
      method: req.method,
      path: endpoint.basePath + target.path,
      headers: upstreamHeaders(req, target),
      agent: upstreamAgent,
    },
    (answer) => {
      const headers = downstreamHeaders(answer.headers);
      const length = Number(answer.headers["content-length"]);
      const eventStream = String(answer.headers["content-type"] ?? "").startsWith("text/event-stream");
      if (!eventStream && length <= BUFFERED_MAX_BYTES) {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.once("end", () => {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
          res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
          done();
        });
      } else {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        // Event streams start at once: the head goes out before the first event.
        if (eventStream) res.flushHeaders();
        answer.pipe(res);
        answer.once("end", done);
      }
      answer.once("error", () => {
        res.destroy();
        done();
      });
    },
  );
  upstream.once("error", (error) => {
    done();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ detail: `The deployment's agent server could not be reached (${(error as NodeJS.ErrnoException).code ?? error.message}).` }));
  });
  // The client went away before the answer ended: tell the agent (it cancels or goes on as the run says).
  res.once("close", () => {
    if (!res.writableFinished) upstream.destroy();
    done();
  });
  // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3).
  if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined) upstream.end();
  else req.pipe(upstream);
}

function upstreamHeaders(req: IncomingMessage, target: ForwardTarget): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const given = req.headers;
  for (const name in given) {
    if (!HOP_BY_HOP.has(name) && name !== "x-api-key" && name !== "host") headers[name] = given[name];
  }
  headers["x-api-key"] = target.apiKey;
  const forwardedFor = given["x-forwarded-for"];
  const peer = req.socket.remoteAddress ?? "";
  headers["x-forwarded-for"] = forwardedFor ? `${forwardedFor}, ${peer}` : peer;
  headers["x-forwarded-host"] = given.host ?? "";
  headers["x-forwarded-proto"] = "encrypted" in req.socket ? "https" : "http";
  headers["x-forwarded-prefix"] = target.prefix;
  return headers;
}

function downstreamHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}
