import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two cores: keep the number of servers started at once modest.
    maxWorkers: 2,
    // expect.poll gives up after 1 s by default: too short for a page that refreshes every
    // 2 s, or a server on a loaded machine. A condition that never holds still fails.
    expect: { poll: { timeout: 10_000 } },
  },
});
