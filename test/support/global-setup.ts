import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

/**
 * Gives the suite a real PostgreSQL server and a real redis-server. `.ci/run` starts
 * them once and passes their URLs in the environment; a developer's plain
 * `npm test` gets a private pair started here and stopped at the end.
 */
export default function setup(project: TestProject) {
  let ownDir: string | undefined;
  let databaseUrl = process.env.SLIPWAY_TEST_DATABASE_URL;
  let redisUrl = process.env.SLIPWAY_TEST_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    ownDir = mkdtempSync(join(tmpdir(), "slipway-services-"));
    const output = execFileSync("bash", ["scripts/test-services.sh", "start", ownDir], { encoding: "utf8" });
    for (const line of output.split("\n")) {
      const [key, ...rest] = line.split("=");
      if (key === "SLIPWAY_TEST_DATABASE_URL") databaseUrl = rest.join("=");
      if (key === "SLIPWAY_TEST_REDIS_URL") redisUrl = rest.join("=");
    }
  }
  process.env.SLIPWAY_TEST_DATABASE_URL = databaseUrl;
  process.env.SLIPWAY_TEST_REDIS_URL = redisUrl;
  project.provide("databaseUrl", databaseUrl!);
  project.provide("redisUrl", redisUrl!);
  return () => {
    if (ownDir) {
      execFileSync("bash", ["scripts/test-services.sh", "stop", ownDir]);
      rmSync(ownDir, { recursive: true, force: true });
    }
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}
