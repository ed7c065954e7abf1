import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { callSocket, listeningSockets } from "./agent-socket.ts";
import { keepCalling } from "./keep-calling.ts";
import { api, type Api } from "./api.ts";
import { checkProtocolEndpoints } from "./protocol-endpoints.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";
import { Agent, get } from "node:http";

/**
 * The revision pipeline end to end, with real parts only: a git daemon on loopback
 * serving the example agent, the real `slipway up` (embedded PGlite, or PostgreSQL),
 * real `npm ci`, real agent processes, and the official SDK at the deployment's URL.
 */
const SLOW = 900_000;
const SECRET = "hello-secret-value-42";
const text = (values: unknown) => ((values as { messages?: Array<{ content: unknown }> }).messages ?? []).map((m) => m.content);
const message = (content: string) => ({ messages: [{ role: "human", content }] });

describe.each(BACKENDS)("a deployment from git, on %s", (backend) => {
  let root: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let firstCommit: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-deploy-git-"));
    repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    firstCommit = repo.commit({}, "v1");
    git = await startGitDaemon(join(root, "repos"));
    cp = await startPipelineControlPlane(root, { backend, env: { SLIPWAY_STOP_GRACE_SECONDS: "6" } });
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "builds and serves it, switches to a new commit without a failed request, redeploys the first build, and deletes it",
    async () => {
      // ── create → DEPLOYED ─────────────────────────────────────────────────────────
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "agent",
        source: "github",
        source_config: { repo_url: git.url("agent"), deployment_type: "dev", build_on_push: false },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
        secrets: [{ name: "GREETING", value: SECRET }],
      });
      expect(created.status).toBe(201);
      const deployment = created.body;
      expect(deployment.status).toBe("AWAITING_DATABASE");
      const first = await cpApi.waitForRevision(deployment.id, deployment.latest_revision_id);
      expect(first.status).toBe("DEPLOYED");
      expect(first.source_revision_config.repo_commit_sha).toBe(firstCommit);
      const ready = (await cpApi.call("GET", `/v2/deployments/${deployment.id}`)).body;
      expect(ready).toMatchObject({ status: "READY", active_revision_id: first.id });
      const buildLog = await cpApi.logs(deployment.id, first.id, "build");
      // Installed, or linked from the layer an earlier build of the same lock file left in the shared cache.
      expect(buildLog.join("\n")).toMatch(
        /Installing dependencies with `npm ci` \(package-lock\.json found\)|Installing dependencies: linked the tree that `npm ci` installed before for the same package-lock\.json/,
      );
      const deployLog = await cpApi.logs(deployment.id, first.id, "deploy");
      expect([...buildLog, ...deployLog].join("\n")).not.toContain(SECRET);

      // ── the deployment's URL, with the official SDK and the workspace key ─────────
      const client = new Client({ apiUrl: deployment.url, apiKey: cp.apiKey });
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1", greeting: SECRET });
      const thread = await client.threads.create();
      await client.runs.create(thread.thread_id, "agent", { input: message("one") });
      const second = await client.runs.create(thread.thread_id, "agent", { input: message("two") });
      await client.runs.join(thread.thread_id, second.run_id);
      expect(text((await client.threads.getState(thread.thread_id)).values)).toEqual(["one", "You said: one", "two", "You said: two"]);
      const events: string[] = [];
      for await (const part of client.runs.stream(null, "agent", { input: message("streamed"), streamMode: ["updates", "messages-tuple"] }))
        events.push(part.event);
      expect(events[0]).toBe("metadata");
      expect(events).toContain("updates");
      expect(events.filter((event) => event.startsWith("messages")).length).toBeGreaterThan(1);
      const joined: string[] = [];
      const other = await client.threads.create();
      const background = await client.runs.create(other.thread_id, "slow", {
        input: { steps: 3, delay_ms: 200 },
        streamMode: ["values"],
        streamResumable: true,
      });
      for await (const part of client.runs.joinStream(other.thread_id, background.run_id, { streamMode: ["values"] })) joined.push(part.event);
      expect(joined).toContain("values");
      await checkProtocolEndpoints(deployment.url, cp.apiKey!);

      // The agent processes listen on private Unix sockets and take only the router's key.
      const processSocket = listeningSockets(deployLog.join("\n"))[0];
      expect(processSocket).toBeDefined();
      expect(statSync(dirname(processSocket)).mode & 0o777).toBe(0o700);
      expect(
        (
          await callSocket(processSocket, "/threads/search", {
            method: "POST",
            headers: { "x-api-key": cp.apiKey!, "content-type": "application/json" },
            body: "{}",
          })
        ).status,
      ).toBe(403);
      expect((await fetch(`${deployment.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(
        401,
      );
      // The server in front of the router and the API keeps idle connections as Fastify would (72 s),
      // not Node's 5 s that a client reusing a connection can meet closing (ECONNRESET).
      expect(await keepAliveHeader(`${cp.url}/ok`)).toBe("timeout=72");
      // The control plane's /metrics counts what its router passed to the deployment, by status.
      const metrics = (await cpApi.call("GET", "/metrics?format=json")).body as {
        router: { requests_total: { deployment_id: string; status: number; count: number }[] };
      };
      const routed = metrics.router.requests_total.filter((series) => series.deployment_id === deployment.id);
      expect(routed.filter((series) => series.status === 200).reduce((sum, series) => sum + series.count, 0)).toBeGreaterThan(5);
      expect(routed.find((series) => series.status === 401)?.count).toBeGreaterThanOrEqual(1);

      // ── a new commit, deployed while clients keep calling ─────────────────────────
      const secondCommit = repo.commit({ "src/version.ts": sampleFiles("v2")["src/version.ts"] }, "v2");
      const longThread = await client.threads.create();
      const follow = async (runId: string, lastEventId?: string) => {
        let last: unknown;
        for await (const part of client.runs.joinStream(longThread.thread_id, runId, { streamMode: ["values"], lastEventId })) {
          if (part.event === "values") last = part.data;
        }
        return last as { ticks: number[] };
      };
      const calls = keepCalling(deployment.url, cp.apiKey!, thread.thread_id);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const patched = await cpApi.call("PATCH", `/v2/deployments/${deployment.id}`, { source_revision_config: { repo_ref: "main" } });
      expect(patched.status).toBe(200);
      // A run that starts on the old revision just before the switch and lasts well after it,
      // with its stream open through the switch.
      await cpApi.waitForRevision(deployment.id, patched.body.latest_revision_id, { until: (status) => status === "DEPLOYING" || status.includes("FAILED") });
      // It lasts until the test stores its release key, however long the switch takes here.
      const release = `long-run-${Date.now()}`;
      const long = await client.runs.create(longThread.thread_id, "slow", {
        input: { steps: 1, delay_ms: 500, release_key: release },
        config: { recursion_limit: 2_000 },
        streamMode: ["values"],
        streamResumable: true,
      });
      const longRun = follow(long.run_id);
      const next = await cpApi.waitForRevision(deployment.id, patched.body.latest_revision_id);
      expect(next.status).toBe("DEPLOYED");
      // Resumed on the new revision from the start (Last-Event-ID -1), while the old one still runs it.
      expect((await client.runs.get(longThread.thread_id, long.run_id)).status).toBe("running");
      const resumed = follow(long.run_id, "-1");
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await client.store.putItem(["release"], release, { released: true });
      expect(next.source_revision_config.repo_commit_sha).toBe(secondCommit);
      // A new commit with the same lock file and package.json: no second install.
      expect((await cpApi.logs(deployment.id, next.id, "build")).join("\n")).toMatch(/Installing dependencies: linked the tree that `npm ci` installed before/);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await calls.stop();
      expect(Object.fromEntries(calls.statuses)).toEqual({ 200: expect.any(Number) });
      expect([...calls.versions].sort()).toEqual(["v1", "v2"]);
      const ticks = (await longRun).ticks;
      expect(ticks.length).toBeGreaterThan(3);
      expect((await resumed).ticks).toEqual(ticks);
      expect(text((await client.threads.getState(thread.thread_id)).values)).toEqual(["one", "You said: one", "two", "You said: two"]);
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v2" });

      // ── redeploy the first revision: its build, no install ────────────────────────
      const redeployed = await cpApi.call("POST", `/v2/deployments/${deployment.id}/revisions/${first.id}/redeploy`);
      expect(redeployed.status).toBe(200);
      const third = await cpApi.waitForRevision(deployment.id, redeployed.body.latest_revision_id);
      expect(third.status).toBe("DEPLOYED");
      const thirdLog = (await cpApi.logs(deployment.id, third.id, "build")).join("\n");
      expect(thirdLog).not.toContain("Installing dependencies");
      expect(thirdLog).toContain(`Using build`);
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });

      // ── delete: 204, the URL 404s, the processes stop ─────────────────────────────
      const lastProcess = listeningSockets((await cpApi.logs(deployment.id, third.id, "deploy")).join("\n"))[0];
      expect((await cpApi.call("DELETE", `/v2/deployments/${deployment.id}`)).status).toBe(204);
      expect((await fetch(`${deployment.url}/ok`, { headers: { "x-api-key": cp.apiKey! } })).status).toBe(404);
      for (let i = 0; i < 120 && (await cpApi.call("GET", `/v2/deployments/${deployment.id}`)).status !== 404; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect((await cpApi.call("GET", `/v2/deployments/${deployment.id}`)).status).toBe(404);
      await expect(callSocket(lastProcess, "/ok")).rejects.toThrow();
    },
    SLOW,
  );
});

/** The Keep-Alive header of a keep-alive GET. */
function keepAliveHeader(url: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ keepAlive: true });
    get(url, { agent }, (res) => {
      res.resume();
      res.once("end", () => {
        agent.destroy();
        resolve(res.headers["keep-alive"] as string | undefined);
      });
    }).once("error", reject);
  });
}
