import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * Source maps of the bundle are off unless asked for (decision 0058): once on, Node parses
 * and keeps the map of every module loaded, about 12 MB in every agent process.
 */
const run = promisify(execFile);
const SLIPWAY = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));
// Reports, as the process ends, whether Node maps stack traces through source maps.
const REPORT = 'data:text/javascript,process.on("exit",()=>console.error("source-maps="+process.sourceMapsEnabled))';

async function sourceMapsEnabled(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { stdout, stderr } = await run(process.execPath, ["--import", REPORT, SLIPWAY, "--version"], { env });
  expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  return /source-maps=(\w+)/.exec(stderr)?.[1];
}

describe("source maps of Slipway's bundle", () => {
  const base = { ...process.env, SLIPWAY_FROM_SOURCES: undefined, SLIPWAY_SOURCE_MAPS: undefined, NODE_OPTIONS: undefined };

  it("are not loaded by default", async () => {
    expect(await sourceMapsEnabled(base)).toBe("false");
  });

  it("are turned on by SLIPWAY_SOURCE_MAPS=1", async () => {
    expect(await sourceMapsEnabled({ ...base, SLIPWAY_SOURCE_MAPS: "1" })).toBe("true");
  });
});
