import { ConnectionError, ControlPlaneError } from "./errors.ts";
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, retryDelayMs, type RetryPolicy } from "./retry.ts";

export interface ClientOptions {
  /** The control plane's address, e.g. http://127.0.0.1:8080 (or .../api-host). */
  url: string;
  /** Sent as X-Api-Key. */
  apiKey?: string;
  /** Sent as X-Tenant-Id: the workspace to act in (needed with an organization key). */
  tenantId?: string;
  retry?: Partial<RetryPolicy>;
  /** How long one attempt may take before it counts as a network failure (default 30 s). */
  timeoutMs?: number;
  /** Told before each retry, so a CLI can say why it is waiting. */
  onRetry?: (event: RetryEvent) => void;
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface RetryEvent {
  method: string;
  path: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  reason: string;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type QueryValue = string | number | boolean | undefined | null | readonly string[];

interface RequestSpec {
  method: Method;
  /** Starts with `/`, relative to the control plane's address. */
  path: string;
  query?: Record<string, QueryValue>;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Whether sending it twice does no more than sending it once, so a failure with no
   * clear answer (network error, 5xx) may be retried. Default: GET, PUT and DELETE are;
   * POST and PATCH are not unless the call says so.
   */
  idempotent?: boolean;
  signal?: AbortSignal;
  /** Per attempt; `null`: none (event streams). */
  timeoutMs?: number | null;
  headers?: Record<string, string>;
}

export interface Transport {
  readonly baseUrl: string;
  /** A JSON call; resolves to the parsed body (undefined for 204). */
  json<T>(spec: RequestSpec): Promise<T>;
  /** A call whose body the caller reads (event streams); the response is 2xx. */
  open(spec: RequestSpec): Promise<Response>;
  /**
   * PUT of bytes to an absolute URL that is its own credential (a signed upload URL):
   * no API key, and no retry (the URL works once; the caller asks for a new one).
   */
  putBytes<T>(url: string, data: Uint8Array<ArrayBuffer>, contentType: string, signal?: AbortSignal): Promise<T>;
}

const IDEMPOTENT_METHODS: readonly Method[] = ["GET", "PUT", "DELETE"];

export function createTransport(options: ClientOptions): Transport {
  const baseUrl = options.url.replace(/\/+$/, "");
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const fetchImpl = options.fetch ?? fetch;
  const userAgent = options.userAgent ?? "slipway-client/0.1.0";

  function headersFor(spec: RequestSpec): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json", "user-agent": userAgent, ...spec.headers };
    if (options.apiKey) headers["x-api-key"] = options.apiKey;
    if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    return headers;
  }

  async function exchange<T>(spec: RequestSpec, use: (response: Response) => Promise<T>): Promise<T> {
    const idempotent = spec.idempotent ?? IDEMPOTENT_METHODS.includes(spec.method);
    const url = baseUrl + spec.path + queryString(spec.query);
    // Set once an attempt may have reached the server without us learning the outcome.
    let ambiguous = false;
    for (let retry = 0; ; retry++) {
      const timeoutMs = spec.timeoutMs === undefined ? (options.timeoutMs ?? 30_000) : spec.timeoutMs;
      const signals = [spec.signal, timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs)].filter((s): s is AbortSignal => s !== undefined);
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: spec.method,
          headers: headersFor(spec),
          body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
          signal: signals.length ? AbortSignal.any(signals) : undefined,
        });
      } catch (cause) {
        if (spec.signal?.aborted) throw spec.signal.reason ?? cause;
        const failure = new ConnectionError({ url: baseUrl, cause, write: spec.method !== "GET" });
        const delay = idempotent && retry < policy.retries ? retryDelayMs(retry, policy) : undefined;
        if (delay === undefined) throw failure;
        ambiguous ||= failure.mayHaveApplied;
        await pause(spec, retry, delay, failure.reason);
        continue;
      }
      if (response.ok) return use(response);

      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      const body = await readBody(response);
      // The earlier attempt did delete it; only its answer was lost.
      if (spec.method === "DELETE" && response.status === 404 && ambiguous) return undefined as T;
      const error = new ControlPlaneError({ status: response.status, body, method: spec.method, path: spec.path, retryAfterSeconds: retryAfter });
      // A 429 is answered before any route runs (nothing was done), so even a write may go again.
      const retryable = response.status === 429 || (idempotent && isRetryableStatus(response.status));
      const delay = retryable && retry < policy.retries ? retryDelayMs(retry, policy, retryAfter) : undefined;
      if (delay === undefined) throw error;
      ambiguous ||= response.status >= 500;
      await pause(spec, retry, delay, `HTTP ${response.status}${retryAfter !== undefined ? `, Retry-After ${retryAfter} s` : ""}`);
    }
  }

  async function pause(spec: RequestSpec, retry: number, delayMs: number, reason: string): Promise<void> {
    options.onRetry?.({ method: spec.method, path: spec.path, retry: retry + 1, delayMs, reason });
    await policy.sleep(delayMs, spec.signal);
  }

  return {
    baseUrl,
    json: <T>(spec: RequestSpec) => exchange<T>(spec, async (response) => (await readBody(response)) as T),
    open: (spec) => exchange(spec, async (response) => response),
    async putBytes<T>(url: string, data: Uint8Array<ArrayBuffer>, contentType: string, signal?: AbortSignal): Promise<T> {
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: "PUT",
          headers: { "content-type": contentType, "user-agent": userAgent, accept: "application/json" },
          body: data,
          signal: AbortSignal.any([AbortSignal.timeout(15 * 60_000), ...(signal ? [signal] : [])]),
        });
      } catch (cause) {
        if (signal?.aborted) throw signal.reason ?? cause;
        throw new ConnectionError({ url: new URL(url).origin, cause, write: true });
      }
      const body = await readBody(response);
      if (!response.ok) throw new ControlPlaneError({ status: response.status, body, method: "PUT", path: new URL(url).pathname });
      return body as T;
    },
  };
}

/** `?a=1&b=x&b=y`; undefined and null values are left out, arrays repeat the key. */
function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** JSON when it parses, the text otherwise, undefined when empty (204). */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
