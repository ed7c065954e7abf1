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
 * Build and deploy logs: followed live while a revision builds, read back in the vendor's
 * shapes (v1 POST with filters, v2 GET pages), and never showing a secret's value even
 * when the project prints it.
 */
const SLOW = 600_000;
const SECRET = "do-not-print-me-0451";

describe("revision logs", () => {
  let root: string;
  let git: GitServer;
  let cp: ControlPlaneProcess;
  let cpApi: Api;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-logs-"));
    const repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    // The project prints its secret when its graph loads (at the build's check and at start).
    // Its langgraph.json names a .env file that, git-ignored as usual, was never pushed.
    const config = { ...JSON.parse(sampleFiles("v1")["langgraph.json"]), env: ".env" };
    repo.commit(
      {
        "src/whoami.ts": `console.log("greeting is " + process.env.GREETING);\n${sampleFiles("v1")["src/whoami.ts"]}`,
        "langgraph.json": JSON.stringify(config),
        ".gitignore": ".env\n",
      },
      "chatty",
    );
    git = await startGitDaemon(join(root, "repos"));
    cp = await startPipelineControlPlane(root, { env: { SLIPWAY_STOP_GRACE_SECONDS: "4" } });
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "follows a build as it runs, pages and filters logs in the vendor's shapes, and hides secrets",
    async () => {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "logged",
        source: "github",
        source_config: { repo_url: git.url("agent"), deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
        // A secret that cannot be told from ordinary words is not hidden: the logs keep their `true`s.
        secrets: [
          { name: "GREETING", value: SECRET },
          { name: "STRICT", value: "true" },
        ],
      });
      const deploymentId = created.body.id;
      const revisionId = created.body.latest_revision_id;

      // Follow the build log from the start: lines arrive before the revision is deployed.
      const response = await fetch(`${cp.url}/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?type=build&follow=true`, {
        headers: { "x-api-key": cp.apiKey!, "x-tenant-id": cp.workspaceId! },
      });
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      const followed: Array<{ id: string; message: string; whileStatus: string }> = [];
      let text = "";
      const decoder = new TextDecoder();
      for await (const chunk of response.body!) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = text.indexOf("\n\n")) !== -1) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === "log" && data && followed.length < 3) {
            const status = (await cpApi.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body.status;
            followed.push({ ...JSON.parse(data), whileStatus: status });
          } else if (event === "log" && data) followed.push({ ...JSON.parse(data), whileStatus: "" });
        }
      }
      expect(followed.length).toBeGreaterThan(5);
      expect(followed.slice(0, 3).some((line) => line.whileStatus !== "DEPLOYED")).toBe(true);
      expect(followed.map((line) => line.message).join("\n")).toContain("Installing dependencies");
      expect(followed.map((l) => Number(l.id))).toEqual([...followed.map((l) => Number(l.id))].sort((a, b) => a - b));

      const revision = await cpApi.waitForRevision(deploymentId, revisionId);
      expect(revision.status).toBe("DEPLOYED");

      // v1: newest first, paged, each entry {id, timestamp, level, message}.
      const page = await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, { limit: 3, order: "desc" });
      expect(page.status).toBe(200);
      expect(page.body.logs).toHaveLength(3);
      expect(Object.keys(page.body.logs[0]).sort()).toEqual(["id", "level", "message", "timestamp"]);
      expect(page.body.next_offset).toBe(3);
      expect(Number(page.body.logs[0].id)).toBeGreaterThan(Number(page.body.logs[2].id));
      const searched = await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, { query: "STATUS: AWAITING_DEPLOY" });
      expect(searched.body.logs.map((l: { message: string }) => l.message)).toEqual(["Status: AWAITING_DEPLOY."]);
      expect((await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, { level: "ERROR" })).body.logs).toEqual([]);
      const deploy = await cpApi.call("POST", `/v1/projects/${deploymentId}/deploy_logs`, {});
      expect(deploy.body.logs.map((l: { message: string }) => l.message).join("\n")).toMatch(/listening on unix:\S+\.sock/);
      expect((await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/deploy_logs`, { limit: 1000 })).body.next_offset).toBeNull();

      // The project printed its secret twice (check, start): the logs show it hidden.
      const everything = [...(await cpApi.logs(deploymentId, revisionId, "build")), ...(await cpApi.logs(deploymentId, revisionId, "deploy"))].join("\n");
      expect(everything).toContain("greeting is ****");
      expect(everything).not.toContain(SECRET);
      expect(everything).toContain('{"event":"check","ok":true,');
      const warnings = await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, { level: "WARNING" });
      const warned = warnings.body.logs.map((l: { message: string }) => l.message);
      expect(warned).toContainEqual(expect.stringMatching(/^Secrets shown as they are in these logs: STRICT\. A boolean/));
      expect(warned).toContainEqual(expect.stringMatching(/langgraph\.json: env file "\.env" not found \(.*\): continuing without it/));

      // Bad filters are 422s naming the field; another deployment's id is a 404.
      const bad = await cpApi.call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, { limit: 0, order: "sideways" });
      expect(bad.status).toBe(422);
      expect((await cpApi.call("POST", `/v1/projects/${revisionId}/deploy_logs`, {})).status).toBe(404);
    },
    SLOW,
  );
});
