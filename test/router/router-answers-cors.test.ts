import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess } from "../../src/pipeline/runtime/agent-process.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";
import { freshBackend } from "../support/backends.ts";
import { callSocket } from "../pipeline/agent-socket.ts";
import { INTERNAL_KEY, openRoutedAgent, type RoutedAgent } from "./routed-agent.ts";

/**
 * The router's own answers (401, 403, 404, 503, and preflights no agent can answer)
 * carry the CORS headers the deployment's agent would give, so that a browser client
 * reads the refusal instead of "blocked by CORS policy"; a wrong key is 403 there as on
 * `slipway agent` (and the vendor's deployments), in FastAPI's `{"detail": ...}`.
 */
const ORIGIN = "https://studio.example";
const CORS_CONFIG = fileURLToPath(new URL("../fixtures/http-project/langgraph.prefix.json", import.meta.url));

describe("the router's own answers", () => {
  let routed: RoutedAgent;
  beforeAll(async () => {
    routed = await openRoutedAgent(FIXTURE_CONFIG, "routercors");
  }, 90_000);
  afterAll(async () => {
    await routed?.close();
  });

  /** What a browser needs to read an answer from another origin. */
  function expectReadable(answer: Response, origin = "*"): void {
    expect(answer.headers.get("access-control-allow-origin")).toBe(origin);
    expect(answer.headers.get("access-control-expose-headers")).toContain("X-Pagination-Total");
  }

  it("answers 503 while nothing is deployed with CORS headers, and preflights for it as the agent would", async () => {
    const answer = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: ORIGIN, "x-api-key": routed.owner.api_key } });
    expect(answer.status).toBe(503);
    expectReadable(answer);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(await answer.json()).toEqual({ detail: expect.stringMatching(/has no deployed revision yet/) });

    const preflight = await fetch(routed.url("/threads/search"), {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "x-api-key,content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("x-api-key,content-type");
  });

  it("refuses a missing key with 401 and a wrong one with 403, as slipway agent does, both readable from a browser", async () => {
    routed.serve();
    const missing = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: ORIGIN } });
    expect(missing.status).toBe(401);
    expectReadable(missing);
    expect(await missing.json()).toEqual({ detail: "Missing X-Api-Key header" });

    const wrong = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: ORIGIN, "x-api-key": "slw_not-a-key" } });
    expect(wrong.status).toBe(403);
    expectReadable(wrong);
    expect(await wrong.json()).toEqual({ detail: "Invalid API key" });
    // The agent itself answers a wrong key the same way.
    const agentWrong = await callSocket(routed.agent.socketPath!, "/threads/search", {
      method: "POST",
      headers: { "x-api-key": "slw_not-a-key", "content-type": "application/json" },
      body: "{}",
    });
    expect(agentWrong).toEqual({ status: 403, body: JSON.stringify({ detail: "Invalid API key" }) });

    // The official SDK sees the router's refusal as an HTTP error, not as a failure to connect.
    await expect(new Client({ apiUrl: routed.url(), apiKey: "slw_not-a-key" }).threads.search()).rejects.toMatchObject({ status: 403 });

    const stranger = await routed.harness.tenancy.bootstrap({ keyScope: "workspace" });
    const foreign = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: ORIGIN, "x-api-key": stranger.api_key } });
    expect(foreign.status).toBe(403);
    expectReadable(foreign);
  });

  it("answers 404 for an unknown deployment with CORS headers, and its preflights as the default CORS would", async () => {
    const unknown = `${routed.base}/deployments/${routed.harness.deps.newId()}/threads/search`;
    const answer = await fetch(unknown, { method: "POST", headers: { origin: ORIGIN, "x-api-key": routed.owner.api_key } });
    expect(answer.status).toBe(404);
    expectReadable(answer);
    expect(await answer.json()).toEqual({ detail: expect.stringMatching(/^Deployment ID .* not found\.$/) });

    const preflight = await fetch(unknown, { method: "OPTIONS", headers: { origin: ORIGIN, "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("gives the deployment's http.cors, read from its agent's listening line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-router-cors-"));
    const agent = new AgentProcess({
      name: "cors#1",
      cwd: dir,
      socketPath: join(dir, "agent.sock"),
      args: ["--config", CORS_CONFIG, "--data-dir", freshBackend("pglite", "routercorsagent").dataDir!],
      env: { ...process.env, SLIPWAY_AGENT_API_KEY: INTERNAL_KEY },
      log: routed.deployLog(),
      serverLog: { warn: () => undefined },
      // Not sandboxed: this test is about the router, and starts the process as it is.
      confine: (argv) => ({ command: { program: argv[0], args: argv.slice(1), fds: [] }, spawned: () => undefined, finish: () => undefined }),
    });
    try {
      agent.start();
      for (let i = 0; i < 600 && !agent.endpoint; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(agent.cors).toEqual({ allow_origins: ["https://ui.example"] });
      routed.serveProcesses([agent]);

      const allowed = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: "https://ui.example", "x-api-key": "slw_not-a-key" } });
      expect(allowed.status).toBe(403);
      expectReadable(allowed, "https://ui.example");
      expect(allowed.headers.get("vary")).toBe("Origin");
      const other = await fetch(routed.url("/threads/search"), { method: "POST", headers: { origin: ORIGIN, "x-api-key": "slw_not-a-key" } });
      expect(other.status).toBe(403);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await agent.stop(5_000);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
