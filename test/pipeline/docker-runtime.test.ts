import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerCli } from "../../src/pipeline/runtime/docker/docker-cli.ts";
import { buildImage } from "../../src/pipeline/runtime/docker/image-build.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { freePort } from "../support/ports.ts";
import { ensurePythonWheelhouse } from "../support/python-env.ts";
import { keepCalling } from "./keep-calling.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { containersLabelled, docker, dockerHost, removeImagesOf } from "./docker.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * The pipeline end to end on the Docker runtime (`slipway up --runtime docker`), with
 * real parts: dockerd (images built from local files only: no registry is reachable),
 * a git daemon on loopback, real `npm ci`, the official SDK at the deployment's URL.
 * One deployment is created, switched to a new commit while clients keep calling,
 * redeployed, survives kill -9 of the control plane (its running container adopted by
 * the next one), and is deleted.
 */
const SLOW = 900_000;
const SECRET = "docker-secret-value-7";
const DEPLOYMENT_LABEL = "dev.slipway.deployment";
const PACKAGE_CACHE = join(tmpdir(), "slipway-test-package-cache");
/** The smallest Python project: one graph of the mixed fixture, installed offline from the suite's wheels. */
const PYTHON_GRAPH = fileURLToPath(new URL("../fixtures/mixed-agent/py_echo.py", import.meta.url));
const PIP_CONF = fileURLToPath(new URL("../fixtures/python-deploy/pip.conf", import.meta.url));
const EXTERNAL_IMAGE = `slipway-test-external:${Math.random().toString(36).slice(2, 10)}`;

describe("a deployment on the Docker runtime, on postgres", () => {
  let root: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess | undefined;
  let port: number;
  let apiKey: string;
  let workspaceId: string;
  const schema = `cp_${Math.random().toString(36).slice(2, 10)}`;
  // The same port and data each time: the deployment's URL stays where its clients call it.
  const start = () =>
    startPipelineControlPlane(root, {
      // PostgreSQL on loopback, which containers reach through the deployment's relay socket (the escape probe covers the embedded database).
      backend: "postgres",
      args: ["--runtime", "docker", "--docker-host", dockerHost(), "--port", String(port)],
      // This machine's own pip setting (a find-links folder) would only add a warning per wheel.
      env: { SLIPWAY_STOP_GRACE_SECONDS: "4", SLIPWAY_JOB_LEASE_SECONDS: "4", SLIPWAY_CONTROL_SCHEMA: schema, PIP_FIND_LINKS: undefined },
    });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-docker-runtime-"));
    port = await freePort();
    repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "v1");
    const python = new TestRepository(join(root, "repos"), "python");
    cpSync(PYTHON_GRAPH, join(python.work, "py_echo.py"));
    cpSync(PIP_CONF, join(python.work, "pip.conf"));
    python.commit(
      { "langgraph.json": JSON.stringify({ dependencies: ["."], graphs: { py_echo: "./py_echo.py:graph" }, pip_config_file: "pip.conf" }) },
      "a Python graph",
    );
    const wheels = ensurePythonWheelhouse();
    if (!existsSync(join(PACKAGE_CACHE, "python-wheels"))) {
      mkdirSync(PACKAGE_CACHE, { recursive: true });
      cpSync(wheels, join(PACKAGE_CACHE, "python-wheels"), { recursive: true });
    }
    git = await startGitDaemon(join(root, "repos"));
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    if (dockerHost()) {
      if (docker(["images", "--quiet", EXTERNAL_IMAGE]).trim()) docker(["rmi", "--force", EXTERNAL_IMAGE]);
      removeImagesOf(join(root, "cp"));
    }
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "serves it from containers with its limits, switches commits without a failed request, redeploys, survives kill -9, and deletes it",
    async () => {
      cp = await start();
      const first = cp;
      apiKey = first.apiKey!;
      workspaceId = first.workspaceId!;
      expect(first.output()).toContain('"runtime":"docker"');
      const cpApi: Api = api(first);
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "boxed",
        source: "github",
        source_config: {
          repo_url: git.url("agent"),
          deployment_type: "dev",
          build_on_push: false,
          resource_spec: { min_scale: 1, memory_limit_mb: 512, cpu: 1 },
        },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
        secrets: [{ name: "GREETING", value: SECRET }],
      });
      expect(created.status).toBe(201);
      const deployment = created.body;
      const v1 = await cpApi.waitForRevision(deployment.id, deployment.latest_revision_id, { timeoutMs: 600_000 });
      expect({ status: v1.status, log: v1.status === "DEPLOYED" ? "" : (await cpApi.logs(deployment.id, v1.id, "deploy")).join("\n") }).toEqual({
        status: "DEPLOYED",
        log: "",
      });
      const deployLog = (await cpApi.logs(deployment.id, v1.id, "deploy")).join("\n");
      expect(deployLog).toMatch(/started \(container slipway-/);
      expect(deployLog).toMatch(/Storage: PostgreSQL through unix:\S+\/\.s\.PGSQL\.\d+, as the deployment's own role\./);
      expect(deployLog).not.toContain(SECRET);

      // ── the container: the deployment's limits, a read-only root, no capabilities, its own uid ──
      const [container] = containersLabelled(DEPLOYMENT_LABEL, deployment.id);
      expect(container.State.Running).toBe(true);
      expect(container.HostConfig).toMatchObject({ Memory: 512 * 1048576, NanoCpus: 1e9, ReadonlyRootfs: true, PidsLimit: 512, CapDrop: ["ALL"] });
      expect(container.Config.User).not.toMatch(/^0(:|$)/);
      expect(container.Config.Labels).toMatchObject({ "dev.slipway.revision": v1.id, "dev.slipway.workspace": first.workspaceId });

      const client = new Client({ apiUrl: deployment.url, apiKey: first.apiKey });
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1", greeting: SECRET, heap_mb: expect.any(Number) });
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "one" }] } });

      // ── a new commit, deployed while clients keep calling ─────────────────────────
      repo.commit({ "src/version.ts": sampleFiles("v2")["src/version.ts"] }, "v2");
      const calls = keepCalling(deployment.url, first.apiKey!);
      const patched = await cpApi.call("PATCH", `/v2/deployments/${deployment.id}`, { source_revision_config: { repo_ref: "main" } });
      expect(patched.status).toBe(200);
      const v2 = await cpApi.waitForRevision(deployment.id, patched.body.latest_revision_id, { timeoutMs: 600_000 });
      expect(v2.status).toBe("DEPLOYED");
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await calls.stop();
      expect(Object.fromEntries(calls.statuses)).toEqual({ 200: expect.any(Number) });
      expect([...calls.versions].sort()).toEqual(["v1", "v2"]);
      // The replaced revision's container is stopped once drained.
      for (let i = 0; i < 80 && containersLabelled("dev.slipway.revision", v1.id).length; i++) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(containersLabelled("dev.slipway.revision", v1.id)).toEqual([]);

      // ── redeploy the first revision: its build (and its image), no install ────────
      const redeployed = await cpApi.call("POST", `/v2/deployments/${deployment.id}/revisions/${v1.id}/redeploy`);
      expect(redeployed.status).toBe(200);
      const v3 = await cpApi.waitForRevision(deployment.id, redeployed.body.latest_revision_id, { timeoutMs: 600_000 });
      expect(v3.status).toBe("DEPLOYED");
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });

      // ── kill -9 of the control plane, then a restart on the same data ────────────
      const [running] = containersLabelled(DEPLOYMENT_LABEL, deployment.id);
      // What a control plane of this data directory left of a deployment that is gone: an orphan to remove.
      const runtimeImage = docker(["inspect", "--format", "{{.Config.Image}}", running.Id]).trim();
      const orphan = docker([
        "create",
        "--label",
        `dev.slipway.owner=${running.Config.Labels["dev.slipway.owner"]}`,
        "--label",
        `${DEPLOYMENT_LABEL}=00000000-0000-4000-8000-00000000dead`,
        runtimeImage,
        "/bin/sh",
      ]).trim();
      await first.kill("SIGKILL");
      cp = await start();
      const again = api({ ...cp, apiKey: first.apiKey, workspaceId: first.workspaceId });
      const values = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "after the crash" }] } })) as {
        messages: { content: string }[];
      };
      expect(values.messages.map((m) => m.content)).toEqual(["one", "You said: one", "after the crash", "You said: after the crash"]);
      const restartLog = (await again.logs(deployment.id, v3.id, "deploy")).join("\n");
      expect(restartLog).toMatch(/The control plane restarted: starting this revision again/);
      expect(restartLog).toMatch(/adopted \(container slipway-\S+, still running on unix:/);
      // The container that served before the crash still serves: adopted, not replaced; the orphan is gone.
      const serving = containersLabelled(DEPLOYMENT_LABEL, deployment.id);
      expect(serving.map((c) => ({ id: c.Id, revision: c.Config.Labels["dev.slipway.revision"] }))).toEqual([{ id: running.Id, revision: v3.id }]);
      expect(docker(["ps", "--all", "--quiet", "--no-trunc", "--filter", `id=${orphan}`]).trim()).toBe("");

      // An agent server image of the first build, tagged locally, for the image source test below.
      const builds = readdirSync(join(root, "cp", "builds")).map((key) => join(root, "cp", "builds", key));
      const v1Build = builds.find((dir) => existsSync(join(dir, "src", "version.ts")) && readFileSync(join(dir, "src", "version.ts"), "utf8").includes('"v1"'));
      await makeAgentServerImage(v1Build!, EXTERNAL_IMAGE);

      // ── delete: 204, the URL 404s, the containers are gone ────────────────────────
      expect((await again.call("DELETE", `/v2/deployments/${deployment.id}`)).status).toBe(204);
      // One poll once met a connection reset here (not reproduced since, cause unknown): a failed poll is
      // retried, and printed with the control plane's last output for whoever meets it again; the last GET must answer.
      const resets: string[] = [];
      const poll = () =>
        again.call("GET", `/v2/deployments/${deployment.id}`).catch((error: Error & { cause?: { code?: string; message?: string } }) => {
          resets.push(`${new Date().toISOString()} ${error.message} ${error.cause?.code ?? ""} ${error.cause?.message ?? ""}`);
          return { status: 0 };
        });
      for (let i = 0; i < 120 && (await poll()).status !== 404; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      if (resets.length) console.log(`Polls that failed after the DELETE: ${resets.join(" | ")}\n${cp.output().slice(-4000)}`);
      expect((await again.call("GET", `/v2/deployments/${deployment.id}`)).status).toBe(404);
      expect(containersLabelled(DEPLOYMENT_LABEL, deployment.id)).toEqual([]);
      expect(docker(["images", "--quiet", "--filter", `label=${DEPLOYMENT_LABEL}=${deployment.id}`]).trim()).toBe("");
    },
    SLOW,
  );

  it(
    "deploys an external_docker image, a LangGraph agent server on port 8000, tagged locally",
    async () => {
      const cpApi = api({ ...cp!, apiKey, workspaceId });
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "external",
        source: "external_docker",
        source_config: { resource_spec: { min_scale: 1, memory_limit_mb: 1024 } },
        source_revision_config: { image_uri: EXTERNAL_IMAGE },
        secrets: [{ name: "GREETING", value: SECRET }],
      });
      expect(created.status).toBe(201);
      const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id, { timeoutMs: 300_000 });
      expect(revision.status).toBe("DEPLOYED");
      expect(revision.source_revision_config.image_uri).toBe(EXTERNAL_IMAGE);
      const deployLog = (await cpApi.logs(created.body.id, revision.id, "deploy")).join("\n");
      expect(deployLog).toMatch(/published on http:\/\/127\.0\.0\.1:\d+/);
      // The control plane listens on loopback: the deployment's own URL is out of its containers' reach, and the log says so.
      expect(deployLog).toMatch(
        /LANGGRAPH_API_URL \(http:\/\/127\.0\.0\.1:\d+ and the deployment's path\) is on this machine's loopback, which its containers cannot reach/,
      );
      const client = new Client({ apiUrl: created.body.url, apiKey });
      expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1", greeting: SECRET });
      expect((await cpApi.call("DELETE", `/v2/deployments/${created.body.id}`)).status).toBe(204);
      for (let i = 0; i < 120 && containersLabelled(DEPLOYMENT_LABEL, created.body.id).length; i++) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(containersLabelled(DEPLOYMENT_LABEL, created.body.id)).toEqual([]);
    },
    SLOW,
  );

  it(
    "serves a Python graph: the host's interpreter and the revision's environment are in its image",
    async () => {
      const cpApi = api({ ...cp!, apiKey, workspaceId });
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "python",
        source: "github",
        source_config: { repo_url: git.url("python"), deployment_type: "dev", build_on_push: false, resource_spec: { min_scale: 1, memory_limit_mb: 512 } },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      expect(created.status).toBe(201);
      const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id, { timeoutMs: 600_000 });
      const deployLog = (await cpApi.logs(created.body.id, revision.id, "deploy")).join("\n");
      expect({ status: revision.status, log: revision.status === "DEPLOYED" ? "" : deployLog }).toEqual({ status: "DEPLOYED", log: "" });
      expect(deployLog).toMatch(/Building the revision's image slipway-revision:\w+ \(slipway-python:\w+, the build and its Python environment\)/);
      const client = new Client({ apiUrl: created.body.url, apiKey });
      const values = (await client.runs.wait(null, "py_echo", { input: { messages: [{ role: "human", content: "from a container" }] } })) as {
        messages: { content: string }[];
      };
      expect(values.messages.map((m) => m.content)).toEqual(["from a container", "You said: from a container"]);
      // Its interpreter runs in the container, as the deployment's uid: the agent server's child, not the host's.
      const [container] = containersLabelled(DEPLOYMENT_LABEL, created.body.id);
      expect(docker(["top", container.Name.slice(1), "-o", "pid,args"])).toMatch(/\/srv\/python-env\/bin\/python -m slipway_worker/);
      expect((await cpApi.call("DELETE", `/v2/deployments/${created.body.id}`)).status).toBe(204);
      // Gone before the control plane stops (a container still stopping then would outlive the test).
      for (let i = 0; i < 120 && containersLabelled(DEPLOYMENT_LABEL, created.body.id).length; i++) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(containersLabelled(DEPLOYMENT_LABEL, created.body.id)).toEqual([]);
    },
    SLOW,
  );
});

/**
 * An image in the vendor's contract for image sources, made locally (no registry): the
 * runtime image, a build of the sample project, and `slipway agent` as its command,
 * listening on port 8000 with its own embedded database, as a user's agent server image
 * would. Built on the runtime image, not on a revision's (deleting that deployment
 * removes its images).
 */
async function makeAgentServerImage(build: string, tag: string): Promise<void> {
  // The newest runtime image (revision images are made from it and must not be picked).
  const runtime = docker(["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference=slipway-runtime"]).split("\n")[0];
  const command = [
    "/usr/bin/node",
    "/opt/slipway/bin/slipway.js",
    "agent",
    "--host",
    "0.0.0.0",
    "--port",
    "8000",
    "--config",
    "/srv/agent/langgraph.json",
    "--data-dir",
    "/tmp/agent",
  ];
  await buildImage(new DockerCli(dockerHost()), {
    tag,
    from: runtime,
    sources: [{ host: build, inside: "/srv/agent" }],
    changes: [`CMD ${JSON.stringify(command)}`, "WORKDIR /srv/agent", "LABEL dev.slipway.kind=test"],
  });
}
