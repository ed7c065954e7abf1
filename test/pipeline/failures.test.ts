import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { api, type Api } from "./api.ts";
import { writeSampleProject } from "./sample-project.ts";

/**
 * Each way a revision can fail ends in the right *_FAILED, with a status_message that
 * says which step, which command, its exit code and its last lines, while the previous
 * revision keeps serving. Every broken variant lives on a branch of its own.
 */
const SLOW = 900_000;

describe("revisions that fail", () => {
  let root: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  /** Two deployments of the good revision: the slow failure (never ready) runs on the second, beside the others. */
  let fragile: Served;
  let patient: Served;

  interface Served {
    id: string;
    url: string;
    revisionId: string;
  }

  async function deployGood(name: string): Promise<Served> {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name,
      source: "github",
      source_config: { repo_url: git.url("agent"), deployment_type: "dev" },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const first = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
    expect(first.status, first.status_message).toBe("DEPLOYED");
    return { id: created.body.id, url: created.body.url, revisionId: first.id };
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-failures-"));
    repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "good");
    git = await startGitDaemon(join(root, "repos"));
    cp = await startPipelineControlPlane(root, {
      env: { SLIPWAY_CHECK_TIMEOUT_SECONDS: "25", SLIPWAY_READINESS_TIMEOUT_SECONDS: "40", SLIPWAY_STOP_GRACE_SECONDS: "4" },
    });
    cpApi = api(cp);
    [fragile, patient] = await Promise.all([deployGood("fragile"), deployGood("patient")]);
  }, 300_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Deploys `ref` on `target`, expects `status` and a message matching every pattern, and the old revision still serving. */
  async function expectFailure(ref: string, status: string, patterns: RegExp[], target: Served = fragile): Promise<string> {
    const patched = await cpApi.call("PATCH", `/v2/deployments/${target.id}`, { source_revision_config: { repo_ref: ref } });
    expect(patched.status).toBe(200);
    const revision = await cpApi.waitForRevision(target.id, patched.body.latest_revision_id);
    expect(revision.status, revision.status_message).toBe(status);
    for (const pattern of patterns) expect(revision.status_message).toMatch(pattern);
    const deployment = (await cpApi.call("GET", `/v2/deployments/${target.id}`)).body;
    expect(deployment).toMatchObject({ status: "READY", active_revision_id: target.revisionId });
    const client = new Client({ apiUrl: target.url, apiKey: cp.apiKey });
    expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });
    return revision.status_message;
  }

  /** A branch of `main` with these files changed. */
  function branch(name: string, files: Record<string, string | null>): void {
    const variant = new TestRepository(join(root, "variants"), name, name);
    writeSampleProject(variant.work, "v1");
    variant.commit(files, name);
    // Push the variant's branch into the served repository.
    execFileSync("git", ["-C", variant.work, "push", "-q", "-f", repo.bare, `HEAD:refs/heads/${name}`], {
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
    });
  }

  it(
    "fails each broken revision at the right step, and keeps the previous one serving",
    async () => {
      // Waits at import for something that never comes, with the event loop kept alive (a
      // top-level await on nothing would make Node exit with code 13 instead). Its minute of
      // timeouts passes on the other deployment while the quicker failures run here.
      branch("never-ready", { "src/whoami.ts": "await new Promise(() => setInterval(() => undefined, 1_000));\nexport const whoami = null;\n" });
      const neverReady = expectFailure("never-ready", "DEPLOY_FAILED", [/did not answer \/ok within 40 s \(the readiness timeout\)/], patient);
      neverReady.catch(() => undefined); // awaited below; a failure before then is not unhandled

      await expectFailure("no-such-branch", "CREATE_FAILED", [/ref 'no-such-branch' was not found/, /Its branches are: main/]);

      branch("broken-config", { "langgraph.json": "{ this is not json" });
      await expectFailure("broken-config", "BUILD_FAILED", [/Reading the project failed: langgraph\.json is not valid JSON/]);

      branch("node-99", { "langgraph.json": JSON.stringify({ node_version: "99", graphs: { agent: "./src/agent.ts:graph" } }) });
      await expectFailure("node-99", "BUILD_FAILED", [/the project asks for Node 99 but this server runs Node 20\./, /set "node_version": "20"/]);

      branch("bad-dependency", {
        "package.json": JSON.stringify({
          name: "broken",
          type: "module",
          dependencies: { "@langchain/langgraph": "1.7.3", "@langchain/core": "1.4.0", "slipway-no-such-package-3f9a2c": "1.0.0" },
        }),
        "package-lock.json": null,
      });
      await expectFailure("bad-dependency", "BUILD_FAILED", [
        /Installing dependencies failed: `npm install` exited with code 1/,
        /Last lines of its output/,
        /slipway-no-such-package-3f9a2c/,
      ]);

      branch("throws-at-import", { "src/whoami.ts": 'throw new Error("boom at import: the model key is missing");\nexport const whoami = null;\n' });
      await expectFailure("throws-at-import", "BUILD_FAILED", [
        /Checking the project failed: `slipway agent --check` exited with code 1/,
        /boom at import: the model key is missing/,
      ]);

      const message = await neverReady;
      expect(message).toMatch(/Starting the agent server failed/);
      const buildLog = await cpApi.logs(patient.id, (await cpApi.call("GET", `/v2/deployments/${patient.id}`)).body.latest_revision_id, "build");
      expect(buildLog.join("\n")).toMatch(/still loading after 25 s/);
      // Each failed build's fetched source is gone; only finished builds stay.
      expect(readdirSync(join(root, "cp", "builds")).filter((name) => name.startsWith(".tmp-"))).toEqual([]);
    },
    SLOW,
  );
});
