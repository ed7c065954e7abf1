import { Client } from "@langchain/langgraph-sdk";
import type { FastifyInstance } from "fastify";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildControlPlaneApp } from "../../src/controlplane/app.ts";
import { routeModules } from "../../src/controlplane/routes.ts";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { LogWriter } from "../../src/pipeline/log-writer.ts";
import type { AgentProcess } from "../../src/pipeline/runtime/agent-process.ts";
import { RevisionGroup } from "../../src/pipeline/runtime/revision-group.ts";
import { createDeploymentRouter, type DeploymentRouter } from "../../src/router/deployment-router.ts";
import { freshBackend } from "../support/backends.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";
import { openHarness, type Harness } from "../controlplane/tenancy-harness.ts";
import { githubDeployment } from "../controlplane/deployments-fixture.ts";
import { callSocket } from "../pipeline/agent-socket.ts";

/**
 * The router in front of a deployment, over real parts: the control plane's app and
 * tenancy tables on PGlite, and a real agent server on a Unix socket (as the pipeline
 * starts them) that accepts only the router's key. The pipeline's supervised process is
 * stood in for by the server's socket (the pipeline tests run the whole thing).
 */
const INTERNAL_KEY = "internal-router-key-0123456789";

describe("the deployment router", () => {
  let harness: Harness;
  let app: FastifyInstance;
  let agent: RunningAgentServer;
  let base: string;
  let owner: { workspace_id: string; organization_id: string; api_key: string };
  let deploymentId: string;
  let serving: RevisionGroup | undefined;
  let router: DeploymentRouter;
  let sockets: string;

  beforeAll(async () => {
    harness = await openHarness("pglite", { modules: routeModules });
    const target = freshBackend("pglite", "router");
    sockets = mkdtempSync(join(tmpdir(), "slipway-router-test-"));
    agent = await startAgentServer({ configPath: FIXTURE_CONFIG, socketPath: join(sockets, "agent.sock"), dataDir: target.dataDir, schema: target.schema, apiKey: INTERNAL_KEY, logLevel: "error" });
    router = createDeploymentRouter({ db: harness.db, authenticator: harness.authenticator, target: () => serving, holdMs: 300 });
    app = await buildControlPlaneApp({ deps: harness.deps, authenticator: harness.authenticator, router, services: [], logLevel: "error" });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    owner = await harness.tenancy.bootstrap({ keyScope: "workspace" });
    const created = await app.inject({ method: "POST", url: "/v2/deployments", headers: { "x-api-key": owner.api_key }, payload: githubDeployment("routed") });
    deploymentId = created.json().id;
  });

  afterAll(async () => {
    await app?.close();
    await agent?.close();
    await harness?.close();
    if (sockets) rmSync(sockets, { recursive: true, force: true });
  });

  const url = (path = "") => `${base}/deployments/${deploymentId}${path}`;
  const serve = () => {
    const log = new LogWriter(harness.db, { workspaceId: owner.workspace_id, deploymentId, revisionId: deploymentId, type: "deploy" }, []);
    serving = new RevisionGroup(deploymentId, "revision", [{ endpoint: { socketPath: agent.socketPath!, basePath: agent.basePath } } as AgentProcess], INTERNAL_KEY, log);
  };

  it("answers 503 with the latest revision's status while nothing is deployed", async () => {
    const answer = await fetch(url("/ok"), { headers: { "x-api-key": owner.api_key } });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect((await answer.json()).detail).toMatch(/has no deployed revision yet\. Its latest revision .* is CREATING\./);
  });

  it("requires a key that may use the deployment's workspace: 401 without or unknown, 403 for another workspace, 404 for no such deployment", async () => {
    serve();
    expect((await fetch(url("/threads/search"), { method: "POST" })).status).toBe(401);
    expect((await fetch(url("/ok"), { headers: { "x-api-key": "slw_0000000000000000xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } })).status).toBe(401);
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
    expect((await callSocket(agent.socketPath!, "/threads/search", { method: "POST", headers: { "x-api-key": owner.api_key, "content-type": "application/json" }, body: "{}" })).status).toBe(403);
    expect((await callSocket(agent.socketPath!, "/threads/search", { method: "POST", headers: { "x-api-key": INTERNAL_KEY, "content-type": "application/json" }, body: "{}" })).status).toBe(200);
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
    serving = new RevisionGroup(deploymentId, "revision", [{ endpoint: undefined } as AgentProcess], INTERNAL_KEY, new LogWriter(harness.db, { workspaceId: owner.workspace_id, deploymentId, revisionId: deploymentId, type: "deploy" }, []));
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
