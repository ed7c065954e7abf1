import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { freePort } from "../support/ports.ts";
import { alive, startedPids } from "./agent-pids.ts";
import { api } from "./api.ts";
import { writeSampleProject } from "./sample-project.ts";

/**
 * `kill -9` of the control plane while a revision builds, and while one is deployed, then
 * a restart on the same data: the build resumes and deploys, what was deployed is served
 * again, and no agent process of the killed control plane is left running.
 */
const SLOW = 900_000;

describe.each(BACKENDS)("a control plane killed and restarted, on %s", (backend) => {
  let root: string;
  let git: GitServer;
  let cp: ControlPlaneProcess | undefined;
  let port: number;
  // The same port each time: the deployment's URL stays where its clients call it.
  const start = () =>
    startControlPlane(["--data-dir", join(root, "cp"), "--port", String(port), ...(backend === "postgres" ? ["--database-url", inject("databaseUrl")] : [])], {
      SLIPWAY_CONTROL_SCHEMA: schema,
      SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
      SLIPWAY_PACKAGE_CACHE: join(tmpdir(), "slipway-test-package-cache"),
      SLIPWAY_STOP_GRACE_SECONDS: "4",
      // On PostgreSQL another node could hold a job: a short lease lets the restart take it over soon.
      SLIPWAY_JOB_LEASE_SECONDS: "4",
      SLIPWAY_DATABASE_URL: undefined,
    });
  const schema = `cp_${Math.random().toString(36).slice(2, 10)}`;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-restart-"));
    port = await freePort();
    const repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "v1");
    git = await startGitDaemon(join(root, "repos"));
  });

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "resumes a build cut by kill -9, serves the deployed revision again, and leaves no agent process behind",
    async () => {
      cp = await start();
      const first = cp;
      const cpApi = api(first);
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "survivor",
        source: "github",
        // The install takes a few seconds longer, so the kill lands in BUILDING.
        source_config: { repo_url: git.url("agent"), deployment_type: "dev", install_command: "npm ci && sleep 4" },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      const deployment = created.body;
      await cpApi.waitForRevision(deployment.id, deployment.latest_revision_id, { until: (status) => status === "BUILDING" });
      await first.kill("SIGKILL");

      cp = await start();
      const again = api({ ...cp, apiKey: first.apiKey, workspaceId: first.workspaceId });
      const revision = await again.waitForRevision(deployment.id, deployment.latest_revision_id);
      expect(revision.status).toBe("DEPLOYED");
      const buildLog = (await again.logs(deployment.id, revision.id, "build")).join("\n");
      expect(buildLog).toMatch(/Resuming at BUILDING \(attempt 2\)/);
      const client = new Client({ apiUrl: deployment.url, apiKey: first.apiKey });
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "before the crash" }] } });

      // kill -9 while DEPLOYED: its agent processes go with it, the restart serves it again.
      const pids = startedPids((await again.logs(deployment.id, revision.id, "deploy")).join("\n"));
      expect(pids.length).toBeGreaterThan(0);
      expect(pids.some(alive)).toBe(true);
      await cp.kill("SIGKILL");
      for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(pids.filter(alive)).toEqual([]);

      cp = await start();
      const values = await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "after the crash" }] } });
      // Served again before the control plane listened, the agent still knows its deployment's URL.
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ api_url: deployment.url });
      expect((values as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual([
        "before the crash",
        "You said: before the crash",
        "after the crash",
        "You said: after the crash",
      ]);
      const after = api({ ...cp, apiKey: first.apiKey, workspaceId: first.workspaceId });
      expect((await after.call("GET", `/v2/deployments/${deployment.id}`)).body).toMatchObject({ status: "READY", active_revision_id: revision.id });
      expect((await after.logs(deployment.id, revision.id, "deploy")).join("\n")).toMatch(/The control plane restarted: starting this revision again/);

      // Its build removed while the control plane was down: the URL says so at once, instead of "is starting".
      await cp.kill("SIGKILL");
      for (const entry of readdirSync(join(root, "cp", "builds"))) rmSync(join(root, "cp", "builds", entry), { recursive: true, force: true });
      cp = await start();
      const refused = await fetch(`${deployment.url}/threads/${thread.thread_id}`, { headers: { "x-api-key": first.apiKey ?? "" } });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { detail: string }).detail).toBe(
        `The build of deployment ${deployment.id}'s active revision ${revision.id} is gone, so it cannot be served: deploy a new revision.`,
      );
    },
    SLOW,
  );
});
