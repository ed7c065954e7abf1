import { afterEach, describe, expect, it, vi } from "vitest";
import { RestartBackoff } from "./restart-backoff.ts";

describe("the pause before a dead replica starts again", () => {
  afterEach(() => vi.useRealTimers());

  it("doubles from 1 s after each crash and stays at 30 s", () => {
    const backoff = new RestartBackoff();
    expect(Array.from({ length: 8 }, () => backoff.next())).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 30_000, 30_000]);
  });

  it("restarts after the pause, and not at all once cancelled", () => {
    vi.useFakeTimers();
    const started: string[] = [];
    const backoff = new RestartBackoff();
    backoff.schedule(backoff.next(), () => started.push("first"));
    vi.advanceTimersByTime(999);
    expect(started).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(started).toEqual(["first"]);
    backoff.schedule(backoff.next(), () => started.push("second"));
    backoff.cancel();
    vi.advanceTimersByTime(60_000);
    expect(started).toEqual(["first"]);
  });
});
