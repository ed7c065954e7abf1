import { defineConfig } from "vitest/config";
import { SlowestFirstSequencer } from "./test/support/slowest-first-sequencer.ts";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two cores: keep the number of servers started at once modest.
    maxWorkers: 2,
    // The longest files first (a fresh clone has no results cache to order by).
    sequence: { sequencer: SlowestFirstSequencer },
    // expect.poll gives up after 1 s by default: too short for a page that refreshes every
    // 2 s, or a server on a loaded machine. A condition that never holds still fails.
    expect: { poll: { timeout: 10_000 } },
  },
});
