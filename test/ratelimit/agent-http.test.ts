import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";

const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));

/** The rate limiter on the real `slipway agent` (embedded storage, built-in table). */
const SLOW = 240_000;
const running: AgentProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((agent) => agent.kill("SIGTERM")));
});

async function agent(args: string[]): Promise<AgentProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "slipway-rl-agent-"));
  const started = await spawnAgent(["--config", FIXTURE_CONFIG, "--data-dir", dataDir, ...args], { SLIPWAY_DATABASE_URL: "", SLIPWAY_AGENT_API_KEY: "" });
  running.push(started);
  return started;
}

describe("slipway agent with --rate-limit (the built-in policy)", () => {
  it(
    "counts anonymous callers by IP; the server's key is limited by the API-key rules; streams carry the headers",
    async () => {
      const open = await agent(["--rate-limit"]);
      const statuses: number[] = [];
      for (let i = 0; i < 101; i++) {
        const response = await fetch(`${open.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        statuses.push(response.status);
        if (i === 99) expect(response.headers.get("ratelimit")).toMatch(/^"catch-all-ip";r=0;t=\d+$/);
        await response.arrayBuffer();
      }
      expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
      expect(statuses[100]).toBe(429);
      await open.kill("SIGTERM");

      const keyed = await agent(["--rate-limit", "--api-key", "agent-secret"]);
      const client = new Client({ apiUrl: keyed.url, apiKey: "agent-secret" });
      const thread = await client.threads.create();
      // A raw stream request, to read the head the SSE writer sends.
      const stream = await fetch(`${keyed.url}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "agent-secret", origin: "https://studio.example" },
        body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] }, stream_mode: ["values"] }),
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      expect(stream.headers.get("ratelimit-policy")).toBe('"default-api-key";q=1000;w=10');
      expect(stream.headers.get("ratelimit")).toMatch(/^"default-api-key";r=99[0-9];t=\d+$/);
      const exposed = stream.headers.get("access-control-expose-headers") ?? "";
      for (const name of ["RateLimit", "RateLimit-Policy", "Retry-After", "Content-Location"]) expect(exposed).toContain(name);
      expect(await stream.text()).toContain("You said: hi");

      // A wrong key is anonymous: 403 from the key check, counted against the IP rule.
      const wrong = await fetch(`${keyed.url}/threads/search`, {
        method: "POST",
        headers: { "x-api-key": "guess", "content-type": "application/json" },
        body: "{}",
      });
      expect(wrong.status).toBe(403);
      expect(wrong.headers.get("ratelimit-policy")).toBe('"catch-all-ip";q=100;w=60');
    },
    SLOW,
  );

  it(
    "applies a policy file given with --rate-limit-policy, without --rate-limit",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "slipway-rl-policy-"));
      const policy = join(dir, "limits.yaml");
      writeFileSync(policy, "mode: replace\nrules:\n  - name: tiny\n    category: Tiny\n    tier: catch-all\n    identity: ip\n    limit: 3/60\n");
      const limited = await agent(["--rate-limit-policy", policy]);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${limited.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        statuses.push(response.status);
        await response.arrayBuffer();
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      rmSync(dir, { recursive: true, force: true });
    },
    SLOW,
  );

  it(
    "serves without limits under --no-rate-limit",
    async () => {
      const off = await agent(["--no-rate-limit"]);
      for (let i = 0; i < 110; i++) {
        const response = await fetch(`${off.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(response.status).toBe(200);
        expect(response.headers.get("ratelimit")).toBeNull();
        await response.arrayBuffer();
      }
    },
    SLOW,
  );
});

describe("slipway agent by default", () => {
  it(
    "applies no rate limit: 1,000 requests from one client in a minute all succeed",
    async () => {
      const open = await agent([]);
      const statuses = new Map<number, number>();
      // Ten at a time, so the whole batch stays well inside one minute.
      for (let batch = 0; batch < 100; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, async () => {
            const response = await fetch(`${open.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
            expect(response.headers.get("ratelimit")).toBeNull();
            await response.arrayBuffer();
            return response.status;
          }),
        );
        for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 1000 });
    },
    SLOW,
  );

  it("says in --help that limits are opt-in", async () => {
    const { execFileSync } = await import("node:child_process");
    const help = execFileSync(process.execPath, [BIN, "agent", "--help"], { encoding: "utf8" });
    expect(help).toContain("--rate-limit ");
    expect(help).toMatch(/Rate limits are off unless --rate-limit/);
    expect(help.replace(/\s+/g, " ")).toContain("--config <path> path to the project's langgraph.json (required)");
  });
});
