import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { testRedisUrl } from "../../test/support/backends.ts";
import { FailoverStore } from "./stores/failover.ts";
import { MemoryStore } from "./stores/memory.ts";
import { RedisStore } from "./stores/redis.ts";
import { StoreUnavailableError } from "./stores/store.ts";

const T0 = Date.now();
const stores: RedisStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function liveStore(): Promise<RedisStore> {
  const store = new RedisStore({ url: testRedisUrl(), prefix: `test:${randomBytes(4).toString("hex")}:` });
  stores.push(store);
  await store.ready();
  return store;
}

/** A loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function deadStore(): Promise<RedisStore> {
  const store = new RedisStore({ url: `redis://127.0.0.1:${await deadPort()}`, commandTimeoutMs: 200 });
  stores.push(store);
  return store;
}

describe("redis store", () => {
  it("stores counters under hashed keys that expire with their window", async () => {
    const store = await liveStore();
    const secret = "lsv2_secret_api_key";
    await store.hit([{ key: `default-api-key\u0000k:${secret}`, limit: 5, windowMs: 10_000 }], T0);
    const keys = await store.redis.keys(`${store.prefix}*`);
    expect(keys).toEqual([store.redisKey(`default-api-key\u0000k:${secret}`)]);
    expect(keys[0]).not.toContain(secret);
    expect(keys[0]).toMatch(/^test:[0-9a-f]{8}:[A-Za-z0-9_-]{32}$/);
    const ttl = await store.redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(9_000);
    expect(ttl).toBeLessThanOrEqual(10_000);
  });

  it("writes nothing for a refused request, not even a new window", async () => {
    const store = await liveStore();
    await store.hit([{ key: "full", limit: 1, windowMs: 60_000 }], T0);
    await store.hit(
      [
        { key: "fresh", limit: 9, windowMs: 60_000 },
        { key: "full", limit: 1, windowMs: 60_000 },
      ],
      T0,
    );
    expect(await store.redis.exists(store.redisKey("fresh"))).toBe(0);
  });

  it("fails fast when Redis is unreachable", async () => {
    const store = await deadStore();
    const started = Date.now();
    await expect(store.hit([{ key: "k", limit: 1, windowMs: 1_000 }], T0)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe("failure modes", () => {
  const hits = [{ key: "k", limit: 2, windowMs: 60_000 }];

  it("open: lets requests through unchecked", async () => {
    const warnings: unknown[] = [];
    const store = new FailoverStore(await deadStore(), { mode: "open", warn: (error) => warnings.push(error) });
    for (let i = 0; i < 5; i++) expect(await store.hit(hits, T0 + i)).toEqual({ allowed: true, counters: [] });
    // Warned once, not once per request.
    expect(warnings).toHaveLength(1);
  });

  it("closed: refuses with StoreUnavailableError", async () => {
    const store = new FailoverStore(await deadStore(), { mode: "closed" });
    await expect(store.hit(hits, T0)).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("memory: keeps limiting in this process", async () => {
    const fallback = new MemoryStore();
    const store = new FailoverStore(await deadStore(), { mode: "memory", fallback });
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await store.hit(hits, T0)).allowed);
    expect(results).toEqual([true, true, false]);
    expect(fallback.size).toBe(1);
  });

  it("uses Redis again once it answers", async () => {
    const fallback = new MemoryStore();
    const store = new FailoverStore(await liveStore(), { mode: "memory", fallback });
    expect((await store.hit(hits, T0)).allowed).toBe(true);
    expect(fallback.size).toBe(0);
  });
});
