import { Client } from "@langchain/langgraph-sdk";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgentServer } from "../../src/agentserver/server.ts";
import type { AgentProcess } from "../../src/pipeline/runtime/agent-process.ts";
import type { DeploymentRouter } from "../../src/router/deployment-router.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";
import type { Harness } from "../controlplane/tenancy-harness.ts";
import { callSocket } from "../pipeline/agent-socket.ts";
import { INTERNAL_KEY, openRoutedAgent, type RoutedAgent } from "./routed-agent.ts";

/** The router in front of a deployment, over real parts (routed-agent.ts). */
describe("the deployment router", () => {
  let routed: RoutedAgent;
  let harness: Harness;
  let app: FastifyInstance;
  let agent: RunningAgentServer;
  let base: string;
  let owner: RoutedAgent["owner"];
  let deploymentId: string;
  let router: DeploymentRouter;

  beforeAll(async () => {
    routed = await openRoutedAgent(FIXTURE_CONFIG, "routed");
    ({ harness, app, agent, base, owner, deploymentId, router } = routed);
  });

  afterAll(async () => {
    await routed?.close();
  });

  const url = (path = "") => routed.url(path);
  const serve = () => routed.serve();

  it("answers 503 with the latest revision's status while nothing is deployed", async () => {
    const answer = await fetch(url("/ok"), { headers: { "x-api-key": owner.api_key } });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect((await answer.json()).detail).toMatch(/has no deployed revision yet\. Its latest revision .* is CREATING\./);
  });

  it("requires a key that may use the deployment's workspace: 401 without, 403 unknown or for another workspace, 404 for no such deployment", async () => {
    serve();
    expect((await fetch(url("/threads/search"), { method: "POST" })).status).toBe(401);
    expect((await fetch(url("/ok"), { headers: { "x-api-key": "slw_0000000000000000xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } })).status).toBe(403);
    const stranger = await harness.tenancy.bootstrap({ keyScope: "workspace" });
    const refused = await fetch(url("/ok"), { headers: { "x-api-key": stranger.api_key } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toContain(deploymentId);
    // An organization key of the owner's organization may; another workspace's key of it may not.
    const orgKey = await harness.tenancy.createApiKey(owner.organization_id, null, "org");
    expect((await fetch(url("/ok"), { headers: { "x-api-key": orgKey.api_key } })).status).toBe(200);
    const sibling = await harness.tenancy.createWorkspace(owner.organization_id, "sibling");
    const siblingKey = await harness.tenancy.createApiKey(owner.organization_id, sibling.workspace_id, "sibling");
    expect((await fetch(url("/ok"), { headers: { "x-api-key": siblingKey.api_key } })).status).toBe(403);
    expect((await fetch(`${base}/deployments/${harness.deps.newId()}/ok`, { headers: { "x-api-key": owner.api_key } })).status).toBe(404);
    // The agent itself refuses the user's key: only the router's goes in.
    expect(
      (
        await callSocket(agent.socketPath!, "/threads/search", {
          method: "POST",
          headers: { "x-api-key": owner.api_key, "content-type": "application/json" },
          body: "{}",
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await callSocket(agent.socketPath!, "/threads/search", {
          method: "POST",
          headers: { "x-api-key": INTERNAL_KEY, "content-type": "application/json" },
          body: "{}",
        })
      ).status,
    ).toBe(200);
  });

  it("passes a browser preflight through without credentials, and the control plane's own routes are untouched", async () => {
    serve();
    const preflight = await fetch(url("/threads/search"), {
      method: "OPTIONS",
      headers: { origin: "https://smith.example", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key,content-type" },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBeTruthy();
    expect((await fetch(`${base}/ok`)).status).toBe(200);
    expect((await fetch(`${base}/v2/deployments`, { headers: { "x-api-key": owner.api_key } })).status).toBe(200);
  });

  it("serves the official SDK: runs, streams as they happen, joinStream with Last-Event-ID", async () => {
    serve();
    const client = new Client({ apiUrl: url(), apiKey: owner.api_key });
    const thread = await client.threads.create();
    // Events arrive while the run goes on (not buffered to its end): the first one
    // comes well before a 3 x 400 ms run ends.
    const started = Date.now();
    const arrivals: number[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "slow", { input: { delay_ms: 400, steps: 3 }, streamMode: ["updates"] })) {
      if (part.event === "updates") arrivals.push(Date.now() - started);
    }
    expect(arrivals.length).toBe(3);
    expect(arrivals[0]).toBeLessThan(arrivals[2] - 500);
    const run = await client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 100, steps: 3 }, streamMode: ["values"], streamResumable: true });
    const all: string[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["values"], lastEventId: "-1" })) all.push(part.event);
    expect(all.filter((event) => event === "values").length).toBeGreaterThanOrEqual(3);
  });

  it("answers whole, small ones collected and large ones streamed (bodies of several chunks both ways)", async () => {
    serve();
    const client = new Client({ apiUrl: url(), apiKey: owner.api_key });
    for (const size of [100_000, 600_000]) {
      const note = "n".repeat(size);
      const thread = await client.threads.create({ metadata: { note } });
      const answer = await fetch(url(`/threads/${thread.thread_id}`), { headers: { "x-api-key": owner.api_key } });
      expect(answer.status).toBe(200);
      expect(Number(answer.headers.get("content-length") ?? size)).toBeGreaterThan(size);
      expect((await answer.json()).metadata.note).toBe(note);
    }
  });

  it("passes a client's disconnect to the agent: a run with on_disconnect=cancel stops", async () => {
    serve();
    const client = new Client({ apiUrl: url(), apiKey: owner.api_key });
    const thread = await client.threads.create();
    const abort = new AbortController();
    const response = await fetch(url(`/threads/${thread.thread_id}/runs/stream`), {
      method: "POST",
      headers: { "x-api-key": owner.api_key, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "slow", input: { delay_ms: 500, steps: 20 }, on_disconnect: "cancel", stream_mode: ["values"] }),
      signal: abort.signal,
    });
    const runPath = response.headers.get("content-location")!;
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    const runId = runPath.split("/").at(-1)!;
    let status = "";
    for (let i = 0; i < 50; i++) {
      status = (await client.runs.get(thread.thread_id, runId)).status;
      if (status !== "running" && status !== "pending") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe("interrupted");
  });

  it("holds a request briefly while no process listens, then answers 503", async () => {
    routed.serveProcesses([{ endpoint: undefined } as AgentProcess]);
    const answer = await fetch(url("/ok"), { headers: { "x-api-key": owner.api_key } });
    expect(answer.status).toBe(503);
    expect((await answer.json()).detail).toMatch(/is starting/);
  });

  it("answers 404 as soon as the deployment is deleted", async () => {
    serve();
    expect((await fetch(url("/ok"), { headers: { "x-api-key": owner.api_key } })).status).toBe(200);
    // As `slipway up` wires it: the delete tells the router, whose cache still holds the deployment.
    harness.deps.onDeploymentsDeleted = (ids) => router.forget(ids);
    const deleted = await app.inject({ method: "DELETE", url: `/v2/deployments/${deploymentId}`, headers: { "x-api-key": owner.api_key } });
    expect(deleted.statusCode).toBe(204);
    expect((await fetch(url("/ok"), { headers: { "x-api-key": owner.api_key } })).status).toBe(404);
  });
});
