import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConnectionError, ControlPlaneError, fieldOf } from "./errors.ts";
import { parseRetryAfter, retryDelayMs, DEFAULT_RETRY } from "./retry.ts";
import { createTransport, type RetryEvent } from "./transport.ts";

/**
 * The client's transport against a real HTTP server that answers from a script: which
 * calls are retried (and after how long), which are not, and what the errors carry.
 */
type Answer = (req: IncomingMessage, res: ServerResponse) => void;

describe("client transport", () => {
  let server: Server;
  let url: string;
  let script: Answer[];
  let seen: { method: string; url: string; headers: IncomingMessage["headers"] }[];
  let delays: number[];
  let retries: RetryEvent[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      req.resume();
      const answer = script.shift() ?? ((_q, r) => json(r, 500, { detail: "script ran out" }));
      answer(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    script = [];
    seen = [];
    delays = [];
    retries = [];
  });

  const transport = (base = url) =>
    createTransport({
      url: base,
      apiKey: "slw_key",
      tenantId: "ws-1",
      timeoutMs: 2_000,
      retry: { sleep: async (ms) => void delays.push(ms), random: () => 0.5 },
      onRetry: (event) => retries.push(event),
    });

  it("retries a GET on 5xx and a dropped connection, then answers; sends the key and workspace", async () => {
    script = [(_q, r) => json(r, 503, { detail: "busy" }), (_q, r) => r.destroy(), (_q, r) => json(r, 200, { ok: 1 })];
    expect(await transport().json({ method: "GET", path: "/v2/deployments", query: { limit: 5, name_contains: undefined } })).toEqual({ ok: 1 });
    expect(seen).toHaveLength(3);
    expect(seen[0].url).toBe("/v2/deployments?limit=5");
    expect(seen[0].headers).toMatchObject({ "x-api-key": "slw_key", "x-tenant-id": "ws-1" });
    expect(retries.map((r) => r.reason)).toEqual(["HTTP 503", expect.stringContaining("closed before an answer")]);
    // Equal jitter with random 0.5: three quarters of 500 ms, then of 1000 ms.
    expect(delays).toEqual([375, 750]);
  });

  it("gives up after the last retry with the server's status and detail", async () => {
    script = Array.from({ length: 4 }, () => (_q: IncomingMessage, r: ServerResponse) => json(r, 502, { detail: "upstream down" }));
    const error = await transport()
      .json({ method: "GET", path: "/x" })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ControlPlaneError);
    expect(error).toMatchObject({ status: 502, detail: "upstream down" });
    expect(seen).toHaveLength(4);
  });

  it("does not retry a POST on 5xx or a dropped connection", async () => {
    script = [(_q, r) => json(r, 500, { detail: "boom" })];
    await expect(transport().json({ method: "POST", path: "/v2/deployments", body: {} })).rejects.toMatchObject({ status: 500, detail: "boom" });
    script = [(_q, r) => r.destroy()];
    const error = await transport()
      .json<never>({ method: "PATCH", path: "/v2/deployments/1", body: {} })
      .catch((e: unknown) => e as ConnectionError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.mayHaveApplied).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it("retries a POST marked idempotent", async () => {
    script = [(_q, r) => json(r, 503, {}), (_q, r) => json(r, 200, { upload_url: "u" })];
    expect(await transport().json({ method: "POST", path: "/v2/deployments/1/upload-url", idempotent: true })).toEqual({ upload_url: "u" });
    expect(seen).toHaveLength(2);
  });

  it("waits Retry-After on 429, even for a POST (refused before anything was done), but not when it is too long", async () => {
    script = [(_q, r) => json(r, 429, { detail: "Rate limit exceeded" }, { "retry-after": "7" }), (_q, r) => json(r, 201, { id: "d" })];
    expect(await transport().json({ method: "POST", path: "/v2/deployments", body: { name: "a" } })).toEqual({ id: "d" });
    expect(delays).toEqual([7_000]);
    script = [(_q, r) => json(r, 429, { detail: "Rate limit exceeded" }, { "retry-after": "600" })];
    await expect(transport().json({ method: "GET", path: "/x" })).rejects.toMatchObject({ status: 429, retryAfterSeconds: 600 });
    expect(seen).toHaveLength(3);
  });

  it("takes a DELETE whose retry finds nothing for done, when the first attempt may have deleted it", async () => {
    script = [(_q, r) => json(r, 500, { detail: "lost" }), (_q, r) => json(r, 404, { detail: "Deployment ID 1 not found." })];
    await expect(transport().json({ method: "DELETE", path: "/v2/deployments/1" })).resolves.toBeUndefined();
    // A DELETE of something that never existed is still a 404.
    script = [(_q, r) => json(r, 404, { detail: "Deployment ID 2 not found." })];
    await expect(transport().json({ method: "DELETE", path: "/v2/deployments/2" })).rejects.toMatchObject({ status: 404 });
  });

  it("reports a 422 field by field", async () => {
    script = [(_q, r) => json(r, 422, { detail: [{ loc: ["body", "secrets", 0, "name"], msg: "must match pattern", type: "pattern" }] })];
    const error = (await transport()
      .json({ method: "POST", path: "/v2/deployments", body: {} })
      .catch((e) => e)) as ControlPlaneError;
    expect(error.problems.map(fieldOf)).toEqual(["secrets[0].name"]);
    expect(error.detail).toBe("secrets[0].name: must match pattern");
  });

  it("says why a server cannot be reached, and that a refused connection applied nothing", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = (await transport(`http://127.0.0.1:${port}`)
      .json({ method: "POST", path: "/v2/deployments", body: {} })
      .catch((e) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.code).toBe("ECONNREFUSED");
    expect(error.mayHaveApplied).toBe(false);
    expect(error.message).toContain(`cannot reach http://127.0.0.1:${port}: connection refused`);
  });

  it("reads Retry-After in seconds and as a date, and caps the backoff", () => {
    expect(parseRetryAfter("12")).toBe(12);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(parseRetryAfter("soon")).toBeUndefined();
    const policy = { ...DEFAULT_RETRY, random: () => 0.999 };
    expect(retryDelayMs(10, policy)).toBeLessThanOrEqual(DEFAULT_RETRY.maxDelayMs);
    expect(retryDelayMs(10, { ...policy, random: () => 0 })).toBe(DEFAULT_RETRY.maxDelayMs / 2);
  });
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
