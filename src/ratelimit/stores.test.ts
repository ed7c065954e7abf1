import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../../test/support/backends.ts";
import { MemoryStore } from "./stores/memory.ts";
import { RedisStore } from "./stores/redis.ts";
import type { RateLimitStore } from "./stores/store.ts";

// The same behaviour is required of both stores; only where counters live differs.
const opened: RateLimitStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
});

const STORES: Array<[string, () => Promise<RateLimitStore>]> = [
  ["memory", async () => new MemoryStore()],
  [
    "redis",
    async () => {
      const store = new RedisStore({ url: testRedisUrl(), prefix: `test:${randomBytes(4).toString("hex")}:` });
      await store.ready();
      opened.push(store);
      return store;
    },
  ],
];

const T0 = 1_700_000_000_000;

describe.each(STORES)("%s store", (_name, open) => {
  it("admits `limit` requests per window, refuses until the window ends, then starts over", async () => {
    const store = await open();
    const hits = [{ key: "k", limit: 3, windowMs: 10_000 }];
    for (let i = 1; i <= 3; i++) expect(await store.hit(hits, T0 + i)).toEqual({ allowed: true, counters: [{ count: i, resetAt: T0 + 10_001 }] });
    expect(await store.hit(hits, T0 + 10_000)).toEqual({ allowed: false, counters: [{ count: 3, resetAt: T0 + 10_001 }] });
    expect(await store.hit(hits, T0 + 10_001)).toEqual({ allowed: true, counters: [{ count: 1, resetAt: T0 + 20_001 }] });
  });

  it("checks every counter before consuming any", async () => {
    const store = await open();
    const roomy = { key: "roomy", limit: 100, windowMs: 60_000 };
    const tight = { key: "tight", limit: 1, windowMs: 60_000 };
    expect((await store.hit([roomy, tight], T0)).allowed).toBe(true);
    for (let i = 0; i < 5; i++) {
      expect(await store.hit([roomy, tight], T0 + 1)).toEqual({
        allowed: false,
        counters: [
          { count: 1, resetAt: T0 + 60_000 },
          { count: 1, resetAt: T0 + 60_000 },
        ],
      });
    }
    expect((await store.hit([roomy], T0 + 2)).counters[0]!.count).toBe(2);
  });

  it("keeps counters of different keys apart", async () => {
    const store = await open();
    expect((await store.hit([{ key: "a", limit: 1, windowMs: 1_000 }], T0)).allowed).toBe(true);
    expect((await store.hit([{ key: "a", limit: 1, windowMs: 1_000 }], T0)).allowed).toBe(false);
    expect((await store.hit([{ key: "b", limit: 1, windowMs: 1_000 }], T0)).allowed).toBe(true);
  });
});
