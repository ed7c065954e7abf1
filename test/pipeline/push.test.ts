import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { api, type Api } from "./api.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * Build on push: the integration's webhook endpoint takes GitHub's push event, checks
 * X-Hub-Signature-256 with the integration's webhook secret, and makes a revision at the
 * pushed commit for each deployment that builds on push from that repository and branch.
 */
const SLOW = 600_000;
const SECRET = "webhook-secret-for-tests";

describe("build on push", () => {
  let root: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess;
  let cpApi: Api;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-push-"));
    repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "v1");
    git = await startGitDaemon(join(root, "repos"));
    cp = await startPipelineControlPlane(root, {
      env: { SLIPWAY_PUSH_QUIET_SECONDS: "2", SLIPWAY_STOP_GRACE_SECONDS: "4", SLIPWAY_DRAIN_TIMEOUT_SECONDS: "2" },
    });
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const push = (integrationId: string, body: unknown, secret = SECRET, event = "push") => {
    const raw = JSON.stringify(body);
    return fetch(`${cp.url}/v1/integrations/github/${integrationId}/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`,
      },
      body: raw,
    });
  };
  const event = (after: string, ref = "refs/heads/main") => ({
    ref,
    after,
    repository: { clone_url: git.url("agent"), html_url: "http://example.invalid/agent" },
  });

  it(
    "refuses a wrongly signed push, ignores other branches, and builds two quick pushes once",
    async () => {
      const integration = await cpApi.call("POST", "/v1/integrations/github/install", { name: "local-git", base_url: git.baseUrl, webhook_secret: SECRET });
      expect(integration.status).toBe(201);
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "pushed",
        source: "github",
        source_config: { integration_id: integration.body.id, repo_url: git.url("agent"), deployment_type: "dev", build_on_push: true },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      expect(created.status).toBe(201);
      const deploymentId = created.body.id;
      expect((await cpApi.waitForRevision(deploymentId, created.body.latest_revision_id)).status).toBe("DEPLOYED");
      const count = async () => (await cpApi.call("GET", `/v2/deployments/${deploymentId}/revisions`)).body.resources.length;

      const a = repo.commit({ "src/version.ts": sampleFiles("v2")["src/version.ts"] }, "v2");
      expect((await push(integration.body.id, event(a), "a wrong secret")).status).toBe(401);
      const unsigned = await fetch(`${cp.url}/v1/integrations/github/${integration.body.id}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-github-event": "push" },
        body: JSON.stringify(event(a)),
      });
      expect(unsigned.status).toBe(401);
      expect(await count()).toBe(1);

      const other = await push(integration.body.id, event(a, "refs/heads/feature"));
      expect(other.status).toBe(202);
      expect(await other.json()).toEqual({ revisions: [] });
      const ping = await push(integration.body.id, { zen: "hi" }, SECRET, "ping");
      expect(ping.status).toBe(202);
      expect(await count()).toBe(1);

      const b = repo.commit({ "src/version.ts": sampleFiles("v3")["src/version.ts"] }, "v3");
      const first = (await (await push(integration.body.id, event(a))).json()) as { revisions: { revision_id: string }[] };
      const second = (await (await push(integration.body.id, event(b))).json()) as { revisions: { revision_id: string }[] };
      expect(first.revisions).toHaveLength(1);
      expect(second.revisions).toHaveLength(1);
      const built = await cpApi.waitForRevision(deploymentId, second.revisions[0].revision_id);
      expect(built).toMatchObject({ status: "DEPLOYED", source_revision_config: { repo_commit_sha: b } });
      const skipped = (await cpApi.call("GET", `/v2/deployments/${deploymentId}/revisions/${first.revisions[0].revision_id}`)).body;
      expect(skipped.status).toBe("SKIPPED");
      // Built once: no build log for the skipped one.
      expect(await cpApi.logs(deploymentId, skipped.id, "build")).toEqual([]);
    },
    SLOW,
  );
});
