import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyBaseLogger, FastifyServerFactory } from "fastify";
import { STATUS_OF, type SlipwayError } from "../../http/errors.ts";
import { applyFastifyTimeouts } from "../../http/server-timeouts.ts";
import type { FetchHandler } from "./load-app.ts";

/** What the front of the server needs; filled in once Fastify and the project's app exist. */
export interface Front {
  /** `http.mount_prefix`: served under it, and nowhere else. */
  mountPrefix?: string;
  /** The project's app composed with the built-in routes; unset: Fastify alone. */
  dispatch?: FetchHandler;
  /** The --api-key check, for routes of the project's app. */
  refuse?: (method: string, path: string, given: string | string[] | undefined) => SlipwayError | undefined;
  /**
   * auth.path's authenticate handler, for routes of the project's app (built-in routes
   * reached through it are authenticated again by their own hook): a refusal, or nothing.
   */
  authenticate?: (request: Request, path: string) => Promise<{ status: number; message: string; headers: Record<string, string> } | undefined>;
  /** CORS headers for responses of the project's app. */
  cors?: (origin: string) => Record<string, string>;
  log?: FastifyBaseLogger;
}

/** Where the client's address of a request made here is kept, for the built-in routes (logs, rate limits). */
export const remoteAddresses = new WeakMap<Request, string>();

/**
 * The Node server in front of Fastify: it strips `http.mount_prefix` and, with an
 * `http.app`, turns each request into a fetch Request for the project's app, whose
 * Response (its own, or the built-in routes') is written back as it streams. CORS
 * preflights go straight to Fastify, which answers them before any app or key check,
 * as the vendor's server does.
 */
export function frontServer(front: Front): FastifyServerFactory {
  return (handler, options) => {
    const server = createServer((req, res) => {
      if (front.mountPrefix) {
        const rest = unprefixed(req.url ?? "/", front.mountPrefix);
        if (rest === undefined) return sendJson(res, 404, { detail: `Not Found: ${req.method} ${(req.url ?? "/").split("?")[0]}` });
        req.url = rest;
        prefixLocations(res, front.mountPrefix);
      }
      const preflight = req.method === "OPTIONS" && req.headers.origin !== undefined && req.headers["access-control-request-method"] !== undefined;
      if (!front.dispatch || preflight) return handler(req, res);
      serveThroughApp(req, res, front, front.dispatch).catch((error) => {
        front.log?.error({ err: error }, "http.app request failed");
        if (!res.headersSent) sendJson(res, 500, { detail: "Internal server error" });
        else res.destroy();
      });
    });
    return applyFastifyTimeouts(server, options);
  };
}

async function serveThroughApp(req: IncomingMessage, res: ServerResponse, front: Front, dispatch: FetchHandler): Promise<void> {
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  let request: Request;
  try {
    request = toRequest(req, gone.signal);
  } catch {
    return sendJson(res, 400, { detail: "Bad request: invalid Host header or URL" });
  }
  if (req.socket.remoteAddress) remoteAddresses.set(request, req.socket.remoteAddress);
  const response = await answerThroughApp(request, front, dispatch);

  const headers: OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  // The app's own responses (and the refusals above) get the CORS headers the built-in ones already carry.
  for (const [name, value] of Object.entries(corsFor(req, front))) headers[name] ??= value;
  res.writeHead(response.status, headers);
  res.flushHeaders();
  if (!response.body) return void res.end();
  await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>), res).catch((error: NodeJS.ErrnoException) => {
    // A client that went away mid-stream is not a failure of the server.
    if (error.code !== "ERR_STREAM_PREMATURE_CLOSE" && !gone.signal.aborted) throw error;
  });
}

/**
 * One request through the server with a project app, as a fetch: the --api-key check and
 * custom auth for the app's own routes, then the app with the built-in routes behind it.
 * Requests from outside come here from the front server; the in-process client
 * (`new Client()` inside the server) comes here directly.
 */
export async function answerThroughApp(request: Request, front: Front, dispatch: FetchHandler): Promise<Response> {
  const path = new URL(request.url).pathname;
  const problem = front.refuse?.(request.method, path, request.headers.get("x-api-key") ?? undefined);
  if (problem) return Response.json({ detail: problem.message }, { status: STATUS_OF[problem.code] });
  const refusal = await front.authenticate?.(request, path);
  if (refusal) return Response.json({ detail: refusal.message }, { status: refusal.status, headers: refusal.headers });
  return dispatch(request);
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  // A request has a body only when it announces one (RFC 9112 6.3). A DELETE without
  // one must reach the built-in routes bodiless: an empty stream there answers 415.
  const announced = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  const bodyless = req.method === "GET" || req.method === "HEAD" || !announced;
  return new Request(url, {
    method: req.method,
    headers,
    body: bodyless ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>),
    signal,
    // Node's fetch needs this to stream a request body.
    ...({ duplex: "half" } as object),
  });
}

function corsFor(req: IncomingMessage, front: Front): Record<string, string> {
  const origin = req.headers.origin;
  return origin && front.cors ? front.cors(origin) : {};
}

/** "/api/threads?x=1" under "/api" -> "/threads?x=1"; a path outside the prefix -> undefined. */
function unprefixed(url: string, prefix: string): string | undefined {
  if (!url.startsWith(prefix)) return undefined;
  const rest = url.slice(prefix.length);
  if (rest === "") return "/";
  if (rest.startsWith("?")) return `/${rest}`;
  return rest.startsWith("/") ? rest : undefined;
}

/**
 * Under a mount prefix, the paths the server hands out (`Location`, `Content-Location`
 * of run streams) carry it, as clients follow them as they are.
 */
function prefixLocations(res: ServerResponse, prefix: string): void {
  const fix = (value: unknown) =>
    typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.startsWith(`${prefix}/`) ? prefix + value : value;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    for (const name of ["location", "content-location"]) {
      const value = this.getHeader(name);
      if (value !== undefined) this.setHeader(name, fix(value) as string);
    }
    const headers = rest.find((item) => typeof item === "object" && item !== null) as Record<string, unknown> | undefined;
    if (headers && !Array.isArray(headers)) {
      for (const name of Object.keys(headers)) if (/^(content-)?location$/i.test(name)) headers[name] = fix(headers[name]);
    }
    return writeHead.call(this, status, ...(rest as []));
  } as ServerResponse["writeHead"];
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}
