import { describe, expect, it } from "vitest";
import { MemoryStore } from "./stores/memory.ts";

const T0 = 1_700_000_000_000;
const hit = (key: string, limit = 2, windowMs = 10_000) => ({ key, limit, windowMs });

describe("memory store", () => {
  it("counts one fixed window per key, opened by the key's first request", () => {
    const store = new MemoryStore();
    expect(store.hit([hit("a")], T0)).toEqual({ allowed: true, counters: [{ count: 1, resetAt: T0 + 10_000 }] });
    expect(store.hit([hit("a")], T0 + 4_000)).toEqual({ allowed: true, counters: [{ count: 2, resetAt: T0 + 10_000 }] });
    expect(store.hit([hit("a")], T0 + 9_999)).toEqual({ allowed: false, counters: [{ count: 2, resetAt: T0 + 10_000 }] });
    expect(store.hit([hit("a")], T0 + 10_000)).toEqual({ allowed: true, counters: [{ count: 1, resetAt: T0 + 20_000 }] });
  });

  it("changes no counter when any counter is full", () => {
    const store = new MemoryStore();
    store.hit([hit("full", 1)], T0);
    expect(store.hit([hit("free", 5), hit("full", 1)], T0).allowed).toBe(false);
    expect(store.size).toBe(1);
    expect(store.hit([hit("free", 5)], T0).counters[0]!.count).toBe(1);
  });

  it("sweeps finished windows out as the clock moves, without a timer", () => {
    const store = new MemoryStore({ sweepIntervalMs: 1_000 });
    for (let i = 0; i < 50; i++) store.hit([hit(`short-${i}`, 5, 2_000)], T0);
    store.hit([hit("long", 5, 60_000)], T0);
    expect(store.size).toBe(51);
    store.hit([hit("probe", 5, 60_000)], T0 + 2_000);
    expect(store.size).toBe(2);
  });

  it("never holds more than maxKeys counters, dropping the oldest window first", () => {
    const store = new MemoryStore({ maxKeys: 3 });
    store.hit([hit("k1")], T0);
    store.hit([hit("k2")], T0 + 1);
    store.hit([hit("k3")], T0 + 2);
    store.hit([hit("k1")], T0 + 3); // still k1's first window: it stays the oldest
    store.hit([hit("k4")], T0 + 4);
    expect(store.size).toBe(3);
    // k1 was dropped: its count starts over (dropping k2 to make room); k3 keeps its count.
    expect(store.hit([hit("k1")], T0 + 5).counters[0]!.count).toBe(1);
    expect(store.size).toBe(3);
    expect(store.hit([hit("k3")], T0 + 6).counters[0]!.count).toBe(2);
    for (let i = 0; i < 10_000; i++) store.hit([hit(`flood-${i}`)], T0 + 7);
    expect(store.size).toBe(3);
  });

  it("moves a restarted window to the back of the eviction order", () => {
    const store = new MemoryStore({ maxKeys: 2, sweepIntervalMs: Number.MAX_SAFE_INTEGER });
    store.hit([hit("a", 5, 1_000)], T0);
    store.hit([hit("b", 5, 60_000)], T0 + 1);
    store.hit([hit("a", 5, 1_000)], T0 + 1_000); // a's new window opens after b's
    store.hit([hit("c", 5, 60_000)], T0 + 1_001); // so b is the oldest and goes
    expect(store.hit([hit("a", 5, 1_000)], T0 + 1_002).counters[0]!.count).toBe(2);
    expect(store.hit([hit("b", 5, 60_000)], T0 + 1_003).counters[0]!.count).toBe(1);
  });
});
