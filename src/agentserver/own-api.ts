import type { FastifyInstance, FastifyRequest } from "fastify";
import { builtInFetch } from "./http-app/builtin-fetch.ts";

/** Request headers that describe the outer request itself, not its caller: not passed on. */
const OWN_HEADERS = /^(content-|accept|last-event-id$|mcp-|a2a-|host$)/i;

/** A built-in route's refusal (any status outside 2xx), with its `detail`. */
export class OwnApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = "OwnApiRefusal";
  }
}

export interface OwnApi {
  /** The route's answer as it came (a stream stays a stream). */
  fetch(caller: FastifyRequest, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response>;
  /** A JSON route's answer, parsed; a status outside 2xx is thrown as an OwnApiRefusal. */
  json<T>(caller: FastifyRequest, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ value: T; headers: Headers }>;
}

/**
 * The agent server's own REST routes, called in process on behalf of the caller of a
 * protocol endpoint (MCP, A2A), as the vendor's server does it: the call carries the
 * caller's credentials (API key, bearer token, cookies, its other headers), so the key
 * check, custom auth with its `on` handlers, validation and `configurable_headers`
 * apply to it exactly as to the same call made directly (decision 0042).
 */
export function ownApi(app: FastifyInstance): OwnApi {
  const callerIps = new WeakMap<Request, string>();
  const dispatch = builtInFetch(app, (request) => callerIps.get(request));
  const fetchAs: OwnApi["fetch"] = async (caller, method, path, body, signal) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(caller.headers)) {
      if (value === undefined || OWN_HEADERS.test(name)) continue;
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, String(item));
    }
    headers.set("accept", "application/json, text/event-stream");
    if (body !== undefined) headers.set("content-type", "application/json");
    const request = new Request(`http://localhost${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    callerIps.set(request, caller.ip);
    return dispatch(request);
  };
  return {
    fetch: fetchAs,
    async json<T>(caller: FastifyRequest, method: string, path: string, body?: unknown, signal?: AbortSignal) {
      const response = await fetchAs(caller, method, path, body, signal);
      const text = await response.text();
      const parsed = text ? (JSON.parse(text) as unknown) : null;
      if (!response.ok) throw new OwnApiRefusal(response.status, detailOf(parsed) ?? response.statusText);
      return { value: parsed as T, headers: response.headers };
    },
  };
}

function detailOf(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  return detail === undefined ? undefined : JSON.stringify(detail);
}

export interface OwnSseEvent {
  event: string;
  data: unknown;
}

/** The events of a streaming route's answer (`event:` and JSON `data:` lines; comments skipped). */
export async function* ownSseEvents(response: Response): AsyncGenerator<OwnSseEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffered = "";
  let event = "message";
  let data: string[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).replace(/\r$/, "");
      buffered = buffered.slice(newline + 1);
      if (line === "") {
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) as unknown };
        event = "message";
        data = [];
      } else if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
  }
}
