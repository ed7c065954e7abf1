import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { ensurePythonWheelhouse } from "../support/python-env.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * A Python project through the revision pipeline, with real parts: the git daemon on
 * loopback, the real `slipway up` (sandboxed where bubblewrap runs), a real virtual
 * environment installed by pip, the worker shim, and the official SDK at the
 * deployment's URL. The project mixes the JS sample agent with a Python package in
 * `py/` (src layout), so both installs run.
 *
 * Installs are offline: the package cache's python-wheels folder holds wheels downloaded
 * from PyPI once per machine (~/.cache/slipway), and the project's pip.conf says
 * no-index, so a build resolves from them in seconds.
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/python-deploy/", import.meta.url));
const PACKAGE_CACHE = join(tmpdir(), "slipway-test-package-cache");

function mixedConfig(extra: Record<string, unknown> = {}): string {
  const sample = JSON.parse(sampleFiles("v1")["langgraph.json"]) as { graphs: Record<string, string> };
  return JSON.stringify(
    {
      ...sample,
      graphs: { ...sample.graphs, py_agent: "./py/src/pyagent/graph.py:graph" },
      dependencies: [".", "./py"],
      pip_config_file: "pip.conf",
      dockerfile_lines: ["RUN apt-get update && apt-get install -y curl"],
      ...extra,
    },
    null,
    2,
  );
}

describe("a Python project deployed from git", () => {
  let root: string;
  let git: GitServer;
  let repo: TestRepository;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let deploymentId: string;
  let client: Client;
  let served: string;

  beforeAll(async () => {
    const wheels = ensurePythonWheelhouse();
    if (!existsSync(join(PACKAGE_CACHE, "python-wheels"))) {
      mkdirSync(PACKAGE_CACHE, { recursive: true });
      cpSync(wheels, join(PACKAGE_CACHE, "python-wheels"), { recursive: true });
    }
    root = mkdtempSync(join(tmpdir(), "slipway-deploy-python-"));
    repo = new TestRepository(join(root, "repos"), "mixed");
    writeSampleProject(repo.work, "v1");
    cpSync(FIXTURE, repo.work, { recursive: true });
    repo.commit({ "langgraph.json": mixedConfig() }, "a JS and a Python graph");
    git = await startGitDaemon(join(root, "repos"));
    // This machine's own pip setting (a find-links folder) would only add a warning per wheel.
    cp = await startPipelineControlPlane(root, { env: { PIP_FIND_LINKS: undefined } });
    cpApi = api(cp);
  }, 300_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Deploys the tip of main again; resolves with the revision once it is terminal. */
  async function redeploy(): Promise<any> {
    const patched = await cpApi.call("PATCH", `/v2/deployments/${deploymentId}`, { source_revision_config: { repo_ref: "main" } });
    expect(patched.status).toBe(200);
    return cpApi.waitForRevision(deploymentId, patched.body.latest_revision_id, { timeoutMs: 300_000 });
  }

  it("builds a virtual environment with the project's packages and the worker, and serves both languages at the deployment's URL", async () => {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name: "mixed",
      source: "github",
      source_config: { repo_url: git.url("mixed"), deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    });
    expect(created.status).toBe(201);
    deploymentId = created.body.id;
    const first = await cpApi.waitForRevision(deploymentId, created.body.latest_revision_id, { timeoutMs: 300_000 });
    expect(first.status, first.status_message).toBe("DEPLOYED");
    served = first.id;
    const buildLog = (await cpApi.logs(deploymentId, first.id, "build")).join("\n");
    expect(buildLog).toMatch(/dockerfile_lines is ignored: Slipway builds no container image, so its 1 line\(s\) do not run/);
    expect(buildLog).toMatch(/Installing dependencies(:| with) .*npm ci/);
    expect(buildLog).toMatch(
      /Preparing the Python environment with pip on Python 3\.\d+\.\d+ .*: \. \(code only\), \.\/py \(a package\), and Slipway's worker\./,
    );
    // pip's own output, streamed into the log.
    expect(buildLog).toMatch(/Successfully installed .*langgraph-1\.2\.24/);
    expect(buildLog).toMatch(/Python environment: langgraph 1\.2\.24, langchain-core 1\.8\.3, slipway_worker \d/);

    client = new Client({ apiUrl: created.body.url, apiKey: cp.apiKey });
    expect(await client.runs.wait(null, "py_agent", { input: { text: "hello" } })).toEqual({ text: "hello", reply: "python v1: hello" });
    expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });
  }, 420_000);

  it("reuses the cached environment when only code changed, and serves the new code", async () => {
    repo.commit({ "py/src/pyagent/reply.py": readFileSync(join(FIXTURE, "py/src/pyagent/reply.py"), "utf8").replace("python v1", "python v2") }, "v2 reply");
    const second = await redeploy();
    expect(second.status, second.status_message).toBe("DEPLOYED");
    served = second.id;
    const buildLog = (await cpApi.logs(deploymentId, second.id, "build")).join("\n");
    expect(buildLog).toMatch(
      /Python environment: reusing the one installed before for the same Python 3\.\d+\.\d+, dependencies and worker \(environment [0-9a-f]{32}\); nothing to install\./,
    );
    expect(buildLog).not.toMatch(/Successfully installed/);
    // The package installed into the environment by the first build is the old code: the revision's own files come first.
    expect(await client.runs.wait(null, "py_agent", { input: { text: "again" } })).toEqual({ text: "again", reply: "python v2: again" });
  }, 420_000);

  it("fails the build with the traceback when a Python graph cannot be imported, and keeps serving the last revision", async () => {
    const graph = readFileSync(join(FIXTURE, "py/src/pyagent/graph.py"), "utf8");
    repo.commit(
      { "py/src/pyagent/graph.py": graph.replace("from pyagent.reply import answer", "from pyagent.reply import answer\nimport slipway_no_such_module_7c1e") },
      "broken import",
    );
    const broken = await redeploy();
    expect(broken.status).toBe("BUILD_FAILED");
    expect(broken.status_message).toMatch(/Checking the project failed: `slipway agent --check` exited with code 1/);
    expect(broken.status_message).toMatch(/ModuleNotFoundError: No module named 'slipway_no_such_module_7c1e'/);
    // The traceback names the project's file by its path in the project.
    const buildLog = (await cpApi.logs(deploymentId, broken.id, "build")).join("\n");
    expect(buildLog).toMatch(/py\/src\/pyagent\/graph\.py", line \d+/);
    expect((await cpApi.call("GET", `/v2/deployments/${deploymentId}`)).body).toMatchObject({ active_revision_id: served });
    expect(await client.runs.wait(null, "py_agent", { input: { text: "still" } })).toEqual({ text: "still", reply: "python v2: still" });
    repo.commit({ "py/src/pyagent/graph.py": graph }, "fixed import");
  }, 420_000);

  it("fails the build naming the interpreter when python_version asks for one this machine does not run", async () => {
    repo.commit({ "langgraph.json": mixedConfig({ python_version: "3.9" }) }, "python 3.9");
    const old = await redeploy();
    expect(old.status).toBe("BUILD_FAILED");
    expect(old.status_message).toMatch(/python_version "3\.9" asks for Python 3\.9, but no working python3\.9 is on this machine's PATH/);
    expect((await cpApi.call("GET", `/v2/deployments/${deploymentId}`)).body).toMatchObject({ active_revision_id: served });
  }, 120_000);
});
