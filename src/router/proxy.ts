import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";

/**
 * Forwards one request to an agent process on loopback and streams the answer back as it
 * comes: no buffering (SSE events reach the client when the agent writes them), no
 * compression, no timeout on a long response, and a client that goes away closes the
 * upstream request too, so the agent sees the disconnect (on_disconnect).
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the two connections' own business. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);

export const upstreamAgent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });

export interface ForwardTarget {
  /** The process's base URL, e.g. http://127.0.0.1:41234. */
  origin: string;
  /** The path and query the agent server sees. */
  path: string;
  /** Replaces whatever credential the client sent. */
  apiKey: string;
  /** The prefix the client used (X-Forwarded-Prefix). */
  prefix: string;
}

export function forward(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, onDone: () => void): void {
  const origin = new URL(target.origin);
  const headers = upstreamHeaders(req, target);
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    onDone();
  };
  const upstream = request(
    { host: origin.hostname, port: origin.port, method: req.method, path: target.path, headers, agent: upstreamAgent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, downstreamHeaders(answer.headers));
      // Event streams start at once: the head goes out before the first event.
      if (String(answer.headers["content-type"] ?? "").startsWith("text/event-stream")) res.flushHeaders();
      answer.pipe(res);
      answer.once("end", done);
      answer.once("error", () => {
        res.destroy();
        done();
      });
    },
  );
  upstream.setNoDelay(true);
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
  req.pipe(upstream);
}

function upstreamHeaders(req: IncomingMessage, target: ForwardTarget): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_BY_HOP.has(name) && name !== "x-api-key" && name !== "host") headers[name] = value;
  }
  headers["x-api-key"] = target.apiKey;
  const forwardedFor = req.headers["x-forwarded-for"];
  const peer = req.socket.remoteAddress ?? "";
  headers["x-forwarded-for"] = forwardedFor ? `${forwardedFor}, ${peer}` : peer;
  headers["x-forwarded-host"] = req.headers.host ?? "";
  headers["x-forwarded-proto"] = "encrypted" in req.socket ? "https" : "http";
  headers["x-forwarded-prefix"] = target.prefix;
  return headers;
}

function downstreamHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}
