import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { create } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { callSocket, listeningSockets } from "./agent-socket.ts";
import { api, type Api } from "./api.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * A deployment from a local directory, as the vendor's `deploy` makes one: create it,
 * ask for an upload URL, PUT a .tar.gz there (no API key: the URL is signed), PATCH
 * source_tarball_path; then the same again with changed code. No git server involved.
 */
const SLOW = 600_000;

describe.each(BACKENDS)("a deployment from an uploaded directory, on %s", (backend) => {
  let root: string;
  let cp: ControlPlaneProcess;
  let cpApi: Api;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-deploy-upload-"));
    cp = await startPipelineControlPlane(root, { backend, env: { SLIPWAY_STOP_GRACE_SECONDS: "6", SLIPWAY_DRAIN_TIMEOUT_SECONDS: "5" } });
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    rmSync(root, { recursive: true, force: true });
  });

  /**
   * Packs `dir` as the CLI would and uploads it with `contentType` (curl --data-binary
   * sends application/x-www-form-urlencoded); answers the object_path.
   */
  async function upload(deploymentId: string, dir: string, contentType = "application/gzip"): Promise<string> {
    const tarball = join(root, `upload-${Date.now()}.tar.gz`);
    await create({ gzip: true, file: tarball, cwd: dir, portable: true }, ["."]);
    const url = await cpApi.call("POST", `/v2/deployments/${deploymentId}/upload-url`);
    expect(url.status).toBe(200);
    expect(url.body.object_path).toMatch(new RegExp(`^uploads/${deploymentId}/`));
    // Without the signature: refused. With it: stored (no API key needed).
    const unsigned = await fetch(url.body.upload_url.replace(/signature=[^&]+/, "signature=forged"), {
      method: "PUT",
      body: readFileSync(tarball),
      headers: { "content-type": "application/gzip" },
    });
    expect(unsigned.status).toBe(401);
    const put = await fetch(url.body.upload_url, { method: "PUT", body: readFileSync(tarball), headers: { "content-type": contentType } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ object_path: url.body.object_path, size_bytes: readFileSync(tarball).length });
    // A URL works once.
    expect((await fetch(url.body.upload_url, { method: "PUT", body: readFileSync(tarball), headers: { "content-type": "application/gzip" } })).status).toBe(
      409,
    );
    return url.body.object_path;
  }

  it(
    "creates it without a source, uploads, builds and serves it, then serves an upload of changed code",
    async () => {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "from-dir",
        source: "internal_source",
        // Two processes, each with a heap of at most 256 MB.
        source_config: { deployment_type: "dev", resource_spec: { min_scale: 2, memory_mb: 256 } },
        source_revision_config: { langgraph_config_path: "langgraph.json" },
        secrets: [{ name: "GREETING", value: "from-upload" }],
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ status: "UNUSED", active_revision_id: null, secrets: [{ name: "GREETING" }] });
      const deploymentId = created.body.id;
      const waiting = await cpApi.call("GET", `/v2/deployments/${deploymentId}/revisions/${created.body.latest_revision_id}`);
      expect(waiting.body.status).toBe("QUEUED");
      expect(waiting.body.status_message).toContain("upload-url");
      const url = created.body.url;
      expect((await fetch(`${url}/ok`, { headers: { "x-api-key": cp.apiKey! } })).status).toBe(503);

      // A source_tarball_path that was never uploaded is refused, naming the field.
      const bogus = await cpApi.call("PATCH", `/v2/deployments/${deploymentId}`, {
        source_revision_config: { source_tarball_path: `uploads/${deploymentId}/nope.tar.gz` },
      });
      expect(bogus.status).toBe(422);
      expect(bogus.body.detail[0].loc).toEqual(["body", "source_revision_config", "source_tarball_path"]);

      const project = join(root, "project");
      writeSampleProject(project, "v1");
      const first = await cpApi.call("PATCH", `/v2/deployments/${deploymentId}`, {
        source_revision_config: { source_tarball_path: await upload(deploymentId, project) },
      });
      expect(first.status).toBe(200);
      const firstRevision = await cpApi.waitForRevision(deploymentId, first.body.latest_revision_id);
      expect(firstRevision.status).toBe("DEPLOYED");
      const client = new Client({ apiUrl: url, apiKey: cp.apiKey });
      // LANGGRAPH_API_URL: the deployment's own URL, where a graph reaches its server.
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1", greeting: "from-upload", api_url: url });
      const who = (await client.runs.wait(null, "whoami", { input: {} })) as { pid: number; heap_mb: number };
      expect(who.heap_mb).toBeGreaterThanOrEqual(256);
      expect(who.heap_mb).toBeLessThan(400);
      // min_scale 2: two processes of the revision, on the deployment's one database.
      const listening = listeningSockets((await cpApi.logs(deploymentId, firstRevision.id, "deploy")).join("\n"));
      expect(new Set(listening).size).toBe(2);
      // The build's check compiled the TypeScript, and the processes loaded it so (decision 0056).
      for (const kind of ["build", "deploy"] as const)
        expect((await cpApi.logs(deploymentId, firstRevision.id, kind)).join("\n")).not.toContain("TypeScript not compiled");
      for (const process of listening) expect((await callSocket(process, "/ok")).status).toBe(200);
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "kept" }] } });

      writeFileSync(join(project, "src/version.ts"), sampleFiles("v2")["src/version.ts"]);
      const curlsType = "application/x-www-form-urlencoded";
      const second = await cpApi.call("PATCH", `/v2/deployments/${deploymentId}`, {
        source_revision_config: { source_tarball_path: await upload(deploymentId, project, curlsType) },
      });
      const secondRevision = await cpApi.waitForRevision(deploymentId, second.body.latest_revision_id);
      expect(secondRevision.status).toBe("DEPLOYED");
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v2" });
      // Storage belongs to the deployment: the thread made under v1 is still there.
      expect((await client.threads.getState(thread.thread_id)).values).toMatchObject({ messages: [{ content: "kept" }, { content: "You said: kept" }] });

      expect((await cpApi.call("DELETE", `/v2/deployments/${deploymentId}`)).status).toBe(204);
      expect((await fetch(`${url}/ok`, { headers: { "x-api-key": cp.apiKey! } })).status).toBe(404);
    },
    SLOW,
  );

  it("refuses an upload with a link or a path leaving the tree, and one over 200 MB", async () => {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name: "evil-upload",
      source: "internal_source",
      source_config: {},
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    const deploymentId = created.body.id;
    const dir = join(root, "evil");
    writeSampleProject(dir, "v1");
    const { symlinkSync } = await import("node:fs");
    symlinkSync("/etc/passwd", join(dir, "passwd"));
    const tarball = join(root, "evil.tar.gz");
    await create({ gzip: true, file: tarball, cwd: dir }, ["."]);
    const target = await cpApi.call("POST", `/v2/deployments/${deploymentId}/upload-url`);
    const put = await fetch(target.body.upload_url, { method: "PUT", body: readFileSync(tarball), headers: { "content-type": "application/gzip" } });
    expect(put.status).toBe(422);
    expect(JSON.stringify(await put.json())).toContain("links are not allowed");

    const big = await cpApi.call("POST", `/v2/deployments/${deploymentId}/upload-url`);
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent++ > 205) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const tooBig = await fetch(big.body.upload_url, {
      method: "PUT",
      body,
      headers: { "content-type": "application/gzip" },
      duplex: "half",
    } as RequestInit).catch((error: Error) => ({ status: -1, error }));
    expect([413, -1]).toContain(tooBig.status);
    // Nothing was recorded for either: the revision cannot name them.
    const patch = await cpApi.call("PATCH", `/v2/deployments/${deploymentId}`, { source_revision_config: { source_tarball_path: target.body.object_path } });
    expect(patch.status).toBe(422);
  });
});
