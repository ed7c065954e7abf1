import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AgentEndpoint } from "../pipeline/runtime/agent-endpoint.ts";

/**
 * Forwards one request to an agent process and sends its answer back: event streams
 * (and any answer of unknown or large size) stream through as they come, unbuffered and
 * uncompressed, with no timeout; a client that goes away closes the upstream request
 * too, so the agent sees the disconnect (on_disconnect).
 *
 * Small answers of known length (most API calls) are collected and sent with one
 * end(): head and body in one write, without a pipe's stream steps. What proxying
 * costs is mostly the two extra writes that wake a process (docs/decisions/0018).
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the two connections' own business. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

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
  /** For the router's own 502 (CORS headers). */
  errorHeaders?: Record<string, string>;
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
    res.writeHead(502, { ...target.errorHeaders, "content-type": "application/json" });
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

/*
 * Headers go out as flat [name, value, ...] lists: Node then writes them as they are,
 * without a setHeader (and its checks) for each one.
 */

const PROXY_SET = new Set(["x-api-key", "host", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-prefix"]);

function upstreamHeaders(req: IncomingMessage, target: ForwardTarget): string[] {
  const given = req.headers;
  const out: string[] = [];
  copyHeaders(given, out, PROXY_SET);
  const forwardedFor = given["x-forwarded-for"];
  const peer = req.socket.remoteAddress ?? "";
  out.push(
    "host",
    "localhost",
    "x-api-key",
    target.apiKey,
    "x-forwarded-for",
    forwardedFor ? `${forwardedFor}, ${peer}` : peer,
    "x-forwarded-host",
    given.host ?? "",
    "x-forwarded-proto",
    "encrypted" in req.socket ? "https" : "http",
    "x-forwarded-prefix",
    target.prefix,
  );
  return out;
}

function downstreamHeaders(headers: IncomingHttpHeaders): string[] {
  const out: string[] = [];
  copyHeaders(headers, out);
  return out;
}

function copyHeaders(headers: IncomingHttpHeaders, out: string[], skip?: Set<string>): void {
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || skip?.has(name)) continue;
    const value = headers[name];
    if (typeof value === "string") out.push(name, value);
    else if (value) for (const each of value) out.push(name, each);
  }
}
