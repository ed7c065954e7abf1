import { randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { testRedisUrl } from "../../test/support/backends.ts";
import { installErrorHandler } from "../http/error-handler.ts";
import { ManualClock } from "./fixtures/limiter.ts";
import { withExposed } from "../http/expose-headers.ts";
import { registerRateLimit, type RateLimitOptions } from "./plugin.ts";
import { FailoverStore } from "./stores/failover.ts";
import { MemoryStore } from "./stores/memory.ts";
import { RedisStore } from "./stores/redis.ts";

const VALID_KEYS = new Set(["key-alice", "key-bob"]);

/** Stands in for authentication: only known keys and "Bearer user:<id>" tokens count. */
function resolveIdentity(request: FastifyRequest) {
  const key = request.headers["x-api-key"];
  const bearer = /^Bearer user:(.+)$/.exec(request.headers.authorization ?? "");
  return {
    apiKey: typeof key === "string" && VALID_KEYS.has(key) ? key : undefined,
    userId: bearer?.[1],
  };
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function appWith(overrides: Partial<RateLimitOptions> = {}) {
  const clock = new ManualClock();
  const app = Fastify();
  apps.push(app);
  installErrorHandler(app, "fastapi");
  registerRateLimit(app, {
    enabled: true,
    region: "us",
    store: new MemoryStore(),
    trustedProxies: [],
    resolveIdentity,
    clock: clock.read,
    ...overrides,
  });
  // A protected route, as the control plane has: 401 without a valid key.
  app.get("/v2/deployments", async (request, reply) => {
    if (!resolveIdentity(request).apiKey) return reply.status(401).send({ detail: "Missing or invalid API key" });
    return { resources: [], offset: 0 };
  });
  app.post("/runs/query", async () => ({ runs: [] }));
  // A hijacked reply that writes its own head, as the agent server's SSE streams do.
  app.get("/stream", (_request, reply) => {
    // A hijacking route writes its own head; it copies what hooks set on the reply, as
    // the agent server's SSE writer does.
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), "content-type": "text/event-stream" });
    reply.raw.end("event: end\ndata: null\n\n");
  });
  // A CORS layer after the limiter, adding its own name to the expose list.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.url === "/info") reply.header("access-control-expose-headers", withExposed(reply.getHeader("access-control-expose-headers"), ["X-Request-Id"]));
    done();
  });
  app.get("/info", async () => ({ version: "test" }));
  await app.ready();
  return { app, clock };
}

const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}, remoteAddress = "198.51.100.20") =>
  app.inject({ method: "GET", url, headers, remoteAddress });

describe("registerRateLimit over real HTTP", () => {
  it("refuses the 101st unauthenticated request in a minute from one IP with 429 and the headers", async () => {
    const { app } = await appWith();
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 1; i <= 100; i++) {
      last = await fetch(`${base}/v2/deployments`);
      statuses.push(last.status);
      await last.arrayBuffer();
    }
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(last!.headers.get("ratelimit")).toBe('"catch-all-ip";r=0;t=60');

    const refused = await fetch(`${base}/v2/deployments`, { headers: { origin: "https://ui.example" } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.headers.get("ratelimit-policy")).toBe('"catch-all-ip";q=100;w=60');
    expect(refused.headers.get("ratelimit")).toBe('"catch-all-ip";r=0;t=60');
    expect(refused.headers.get("access-control-expose-headers")).toBe("RateLimit, RateLimit-Policy, Retry-After");
    expect(await refused.json()).toEqual({ detail: "Rate limit exceeded: Public (catch-all) allows 100 requests per 60 seconds; retry in 60 seconds." });

    // Authenticated traffic from the same IP is limited by its key's rule instead.
    const keyed = await fetch(`${base}/v2/deployments`, { headers: { "x-api-key": "key-alice" } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get("ratelimit-policy")).toBe('"default-api-key";q=1000;w=10');
    expect(keyed.headers.get("ratelimit")).toBe('"default-api-key";r=999;t=10');
  });
});

describe("registerRateLimit", () => {
  it("counts requests that fail authentication and requests for unknown routes", async () => {
    const { app } = await appWith();
    for (let i = 0; i < 50; i++) expect((await get(app, "/v2/deployments")).statusCode).toBe(401);
    for (let i = 0; i < 50; i++) expect((await get(app, "/no/such/route")).statusCode).toBe(404);
    expect((await get(app, "/no/such/route")).statusCode).toBe(429);
  });

  it("counts an unknown API key against the IP catch-all, so made-up keys buy nothing", async () => {
    const { app } = await appWith();
    for (let i = 0; i < 100; i++) await get(app, "/v2/deployments", { "x-api-key": `random-${i}` });
    const refused = await get(app, "/v2/deployments", { "x-api-key": "random-new" });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail).toContain("Public (catch-all)");
    expect((await get(app, "/v2/deployments", { "x-api-key": "key-bob" })).statusCode).toBe(200);
  });

  it("rounds Retry-After up and admits again when the window ends", async () => {
    const { app, clock } = await appWith();
    const start = clock.now;
    const query = () => app.inject({ method: "POST", url: "/runs/query", headers: { "x-api-key": "key-alice" }, payload: {} });
    for (let i = 0; i < 15; i++) expect((await query()).statusCode).toBe(200);
    clock.now = start + 3_001;
    const refused = await query();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("7");
    expect(refused.headers.ratelimit).toBe('"runs-query-api-key";r=0;t=7');
    expect(refused.json().detail).toMatch(/^Rate limit exceeded: Run query \(API\) allows 15 requests per 10 seconds/);
    clock.now = start + 9_999;
    expect((await query()).headers["retry-after"]).toBe("1");
    clock.now = start + 10_000;
    expect((await query()).statusCode).toBe(200);
  });

  it("limits a bearer user per user and IP", async () => {
    const { app } = await appWith();
    const asUser = (ip: string) =>
      app.inject({ method: "POST", url: "/runs/query", headers: { authorization: "Bearer user:u1" }, payload: {}, remoteAddress: ip });
    for (let i = 0; i < 300; i++) await asUser("198.51.100.1");
    const refused = await asUser("198.51.100.1");
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail).toContain("Run query (User)");
    expect((await asUser("198.51.100.2")).statusCode).toBe(200);
  });

  it("believes X-Forwarded-For only from trusted proxies", async () => {
    const untrusting = (await appWith()).app;
    for (let i = 0; i < 100; i++) await get(untrusting, "/", { "x-forwarded-for": `203.0.113.${i}` }, "10.0.0.1");
    expect((await get(untrusting, "/", { "x-forwarded-for": "203.0.113.250" }, "10.0.0.1")).statusCode).toBe(429);

    const trusting = (await appWith({ trustedProxies: ["10.0.0.0/8"] })).app;
    for (let i = 0; i < 100; i++) await get(trusting, "/", { "x-forwarded-for": "203.0.113.1" }, "10.0.0.1");
    expect((await get(trusting, "/", { "x-forwarded-for": "203.0.113.1" }, "10.0.0.1")).statusCode).toBe(429);
    // Another client behind the same proxy has its own count; a forged hop is ignored.
    expect((await get(trusting, "/", { "x-forwarded-for": "203.0.113.1, 203.0.113.2" }, "10.0.0.1")).statusCode).toBe(404);
  });

  it("exposes the headers to browsers, alongside what CORS lists", async () => {
    const { app } = await appWith();
    const response = await get(app, "/info", { origin: "https://ui.example" });
    expect(response.headers["access-control-expose-headers"]).toBe("RateLimit, RateLimit-Policy, Retry-After, X-Request-Id");
    expect(response.headers["ratelimit-policy"]).toBe('"high-throughput-ip";q=2000;w=10');
    // A request without Origin is not a browser's cross-origin call: no expose list.
    const plain = await get(app, "/v2/deployments", { "x-api-key": "key-alice" });
    expect(plain.headers["ratelimit-policy"]).toBe('"default-api-key";q=1000;w=10');
    expect(plain.headers["access-control-expose-headers"]).toBeUndefined();
  });

  it("sends the headers on hijacked replies that copy the reply's headers into their head", async () => {
    const { app } = await appWith();
    const response = await get(app, "/stream", { "x-api-key": "key-alice" });
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(response.headers.ratelimit).toBe('"default-api-key";r=999;t=10');
  });

  it("does nothing when disabled", async () => {
    const { app } = await appWith({ enabled: false });
    for (let i = 0; i < 150; i++) expect((await get(app, "/v2/deployments")).statusCode).toBe(401);
    expect((await get(app, "/v2/deployments")).headers.ratelimit).toBeUndefined();
  });

  it("answers 503 while Redis is unreachable in failure mode closed", async () => {
    const dead = new RedisStore({ url: "redis://127.0.0.1:1", commandTimeoutMs: 200 });
    const { app } = await appWith({ store: new FailoverStore(dead, { mode: "closed" }) });
    const response = await get(app, "/v2/deployments");
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("1");
    expect(response.json()).toEqual({ detail: "Rate limiter unavailable; retry shortly." });
  });

  it("counts through Redis, shared by two app instances", async () => {
    const prefix = `test:${randomBytes(4).toString("hex")}:`;
    const storeA = new RedisStore({ url: testRedisUrl(), prefix });
    const storeB = new RedisStore({ url: testRedisUrl(), prefix });
    await Promise.all([storeA.ready(), storeB.ready()]);
    const a = (await appWith({ store: storeA })).app;
    const b = (await appWith({ store: storeB })).app;
    for (let i = 0; i < 50; i++) await get(a, "/v2/deployments");
    for (let i = 0; i < 50; i++) await get(b, "/v2/deployments");
    const refused = await get(a, "/v2/deployments");
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("60");
  });
});
