import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { warmPackageCache } from "../support/package-cache.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * The disk rules of docs/decisions/0051, end to end: superseded and failed builds go, and
 * once every deployment is deleted the data directory is back within 20 MB of its size
 * when fresh. Unsandboxed (SLIPWAY_SANDBOX=off), so that builds share the package cache
 * in the data directory, the case where Slipway's own downloads must go too; that cache
 * starts from the suite's warm npm cache (copied in after the fresh size is taken), which
 * stands for what the first install would have downloaded.
 */
const SLOW = 300_000;
const MB = 1024;

describe("the data directory, unsandboxed, after builds and deletes", () => {
  let root: string;
  let dataDir: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let freshKb: number;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-disk-"));
    dataDir = join(root, "cp");
    repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "v1");
    git = await startGitDaemon(join(root, "repos"));
    const suiteCache = join(tmpdir(), "slipway-test-package-cache");
    await warmPackageCache(suiteCache);
    cp = await startPipelineControlPlane(root, {
      env: {
        SLIPWAY_SANDBOX: "off",
        SLIPWAY_PACKAGE_CACHE: undefined,
        SLIPWAY_KEEP_BUILDS: "1",
        SLIPWAY_DRAIN_TIMEOUT_SECONDS: "1",
        SLIPWAY_STOP_GRACE_SECONDS: "1",
        SLIPWAY_CHECK_TIMEOUT_SECONDS: "60",
      },
    });
    cpApi = api(cp);
    freshKb = du(dataDir);
    cpSync(join(suiteCache, "npm"), join(dataDir, "cache", "npm"), { recursive: true });
  }, SLOW);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  function du(path: string): number {
    return Number(execFileSync("du", ["-sk", path]).toString().split("\t")[0]);
  }

  const builds = () => readdirSync(join(dataDir, "builds"));

  async function deploy(id: string): Promise<any> {
    const patched = await cpApi.call("PATCH", `/v2/deployments/${id}`, { source_revision_config: { repo_ref: "main" } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    return cpApi.waitForRevision(id, patched.body.latest_revision_id);
  }

  it(
    "keeps the serving build only (SLIPWAY_KEEP_BUILDS=1), leaves nothing of a failed build, and returns to its fresh size",
    async () => {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "disk",
        source: "github",
        source_config: { repo_url: git.url("agent"), deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id;
      const first = await cpApi.waitForRevision(id, created.body.latest_revision_id);
      expect(first.status, first.status_message).toBe("DEPLOYED");
      expect(builds()).toHaveLength(1);

      // A new commit: a second build (its node_modules linked from the first's layer); the first goes once it has drained.
      repo.commit({ "src/version.ts": sampleFiles("v2")["src/version.ts"] }, "v2");
      const second = await deploy(id);
      expect(second.status, second.status_message).toBe("DEPLOYED");
      await expect.poll(builds, { timeout: 60_000, interval: 500 }).toHaveLength(1);
      expect(readdirSync(join(dataDir, "cache", "installs"))).toHaveLength(1);

      // A commit that does not compile: BUILD_FAILED, and its fetched source is gone.
      repo.commit({ "src/version.ts": "export const VERSION = ;\n" }, "broken");
      const broken = await deploy(id);
      expect(broken.status, broken.status_message).toBe("BUILD_FAILED");
      expect(builds().filter((name) => name.startsWith(".tmp-"))).toEqual([]);
      expect(builds()).toHaveLength(1);

      expect((await cpApi.call("DELETE", `/v2/deployments/${id}`)).status).toBe(204);
      await expect.poll(async () => (await cpApi.call("GET", `/v2/deployments/${id}`)).status, { timeout: 60_000 }).toBe(404);
      // The shared cache's downloads and layers go with the last deployment: renamed aside at once, then removed.
      await expect
        .poll(() => readdirSync(join(dataDir, "cache")).filter((name) => name === "npm" || name.startsWith(".removing-")), { timeout: 30_000 })
        .toEqual([]);
      expect(builds()).toEqual([]);
      expect(readdirSync(join(dataDir, "cache", "installs"))).toEqual([]);
      const afterKb = du(dataDir);
      expect(
        afterKb - freshKb,
        `fresh ${freshKb} KiB, after ${afterKb} KiB:\n${execFileSync("du", ["-k", "-d", "3", dataDir]).toString()}`,
      ).toBeLessThanOrEqual(20 * MB);
    },
    SLOW,
  );
});
