import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

/** The rate limiter as users meet it: the real `slipway up`, the built-in table, real HTTP. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SLOW = 240_000;

interface Up {
  child: ChildProcess;
  url: string;
  apiKey?: string;
  workspaceId?: string;
}

const running: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(stop));
});

/** Starts `slipway up` on a fresh embedded database; resolves once it listens. */
function startUp(args: string[]): Promise<Up> {
  const env: NodeJS.ProcessEnv = { ...process.env, SLIPWAY_DATA_DIR: mkdtempSync(join(tmpdir(), "slipway-rl-up-")) };
  for (const name of ["SLIPWAY_DATABASE_URL", "SLIPWAY_SECRETS_KEY", "SLIPWAY_PORT", "SLIPWAY_REGION", "SLIPWAY_JWT_ISSUER"]) delete env[name];
  const child = spawn(process.execPath, ["bin/slipway.js", "up", "--port", "0", "--host", "127.0.0.1", "--json", ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  const up: Partial<Up> = { child };
  let stdout = "";
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
      for (const line of stdout.split("\n")) {
        if (!line.startsWith("{")) continue;
        const event = JSON.parse(line) as { event: string; url?: string; api_key?: string; workspace_id?: string };
        if (event.event === "bootstrap") Object.assign(up, { apiKey: event.api_key, workspaceId: event.workspace_id });
        if (event.event === "listening") resolve({ ...up, url: event.url! } as Up);
      }
    });
    child.on("close", (code) => reject(new Error(`slipway up exited with ${code}\n${stdout}\n${stderr}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once("close", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await closed;
  clearTimeout(timer);
}

/** Sends `count` requests one after another; returns their statuses and the last response. */
async function send(count: number, url: string, init: RequestInit = {}) {
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < count; i++) {
    last = await fetch(url, init);
    statuses.push(last.status);
    if (i < count - 1) await last.arrayBuffer();
  }
  return { statuses, last: last! };
}

describe("slipway up with the default policy", () => {
  it(
    "refuses the 101st unauthenticated request in a minute from one IP; keys are limited by their own rules",
    async () => {
      const up = await startUp([]);
      const { statuses, last } = await send(100, `${up.url}/v2/deployments`);
      expect(new Set(statuses)).toEqual(new Set([401]));
      expect(last.headers.get("ratelimit-policy")).toBe('"catch-all-ip";q=100;w=60');
      expect(last.headers.get("ratelimit")).toMatch(/^"catch-all-ip";r=0;t=\d+$/);

      const refused = await fetch(`${up.url}/v2/deployments`, { headers: { origin: "https://console.example" } });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(refused.headers.get("ratelimit-policy")).toBe('"catch-all-ip";q=100;w=60');
      expect(refused.headers.get("ratelimit")).toBe(`"catch-all-ip";r=0;t=${retryAfter}`);
      expect(refused.headers.get("access-control-expose-headers")).toContain("RateLimit-Policy");
      expect((await refused.json()) as unknown).toEqual({ detail: expect.stringContaining("Rate limit exceeded: Public (catch-all)") });

      // The same IP with a valid key: its key's rules apply, not the spent catch-all.
      const keyed = { headers: { "x-api-key": up.apiKey!, "x-tenant-id": up.workspaceId! } };
      const listed = await fetch(`${up.url}/v2/deployments`, keyed);
      expect(listed.status).toBe(200);
      expect(listed.headers.get("ratelimit-policy")).toBe('"default-api-key";q=1000;w=10');
      expect(listed.headers.get("ratelimit")).toMatch(/^"default-api-key";r=999;t=(9|10)$/);

      // /runs/stats allows a key 1 request per 10 s in the US (the route does not exist: still counted).
      const stats = await send(2, `${up.url}/api/v1/runs/stats`, { ...keyed, method: "POST" });
      expect(stats.statuses).toEqual([404, 429]);
      expect(((await stats.last.json()) as { detail: string }).detail).toContain("Stats allows 1 request per 10 seconds");

      // A made-up key buys nothing: it counts against the IP, which is spent.
      expect((await fetch(`${up.url}/v2/deployments`, { headers: { "x-api-key": "lsv2_made_up" } })).status).toBe(429);
    },
    SLOW,
  );

  it(
    "applies the EU column with --region eu, and nothing with --no-rate-limit",
    async () => {
      const eu = await startUp(["--region", "eu"]);
      const keyed = { method: "POST", headers: { "x-api-key": eu.apiKey!, "x-tenant-id": eu.workspaceId! } };
      const stats = await send(21, `${eu.url}/runs/stats`, keyed);
      expect(stats.statuses.filter((status) => status === 429)).toHaveLength(1);
      expect(stats.statuses.at(-1)).toBe(429);
      await stop(eu.child);

      const off = await startUp(["--no-rate-limit"]);
      const { statuses, last } = await send(120, `${off.url}/v2/deployments`);
      expect(new Set(statuses)).toEqual(new Set([401]));
      expect(last.headers.get("ratelimit")).toBeNull();
    },
    SLOW,
  );
});
