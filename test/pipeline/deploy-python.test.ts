import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { seedPythonWheels } from "../support/python-env.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { sampleFiles, writeSampleProject } from "./sample-project.ts";

/**
 * A Python project through the revision pipeline, with real parts: the git daemon on
 * loopback, the real `slipway up` (sandboxed where bubblewrap runs), a real virtual
 * environment installed by pip, the worker shim, and the official SDK at the
 * deployment's URL. The project mixes the JS sample agent with a Python package in
 * `py/` (src layout), so both installs run. The official Python SDK and RemoteGraph run the
 * same flows (threads, every stream mode, joins, Last-Event-ID, strategies, cancel,
 * interrupts, state and history) against three JS graphs and their Python twins at the
 * deployment's URL, and must see the same wire.
 *
 * Installs are offline: the package cache's python-wheels folder holds wheels downloaded
 * from PyPI once per machine (~/.cache/slipway), and the project's pip.conf says
 * no-index, so a build resolves from them in seconds.
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/python-deploy/", import.meta.url));
const PACKAGE_CACHE = join(tmpdir(), "slipway-test-package-cache");
const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));
const WIRE_FLOWS = fileURLToPath(new URL("../support/python-wire-flows.py", import.meta.url));

/**
 * Beside them, twins for the wire flows (test/support/python-wire-flows.py): the sample's
 * JS `agent` and `slow`, a JS `approve`, and the Python twin of each.
 */
function twinFiles(): Record<string, string> {
  return {
    "py_chat.py": readFileSync(fileURLToPath(new URL("../../bench/python/fixture/agent.py", import.meta.url)), "utf8"),
    "py_approve.py": readFileSync(fixture("mixed-agent/py_approve.py"), "utf8"),
    "py_slow.py": readFileSync(fixture("python-wire/py_slow.py"), "utf8"),
    "src/approve.ts": readFileSync(fixture("python-wire/src/approve.ts"), "utf8"),
  };
}
const TWIN_GRAPHS = {
  approve: "./src/approve.ts:approve",
  py_chat: "./py_chat.py:graph",
  py_slow: "./py_slow.py:py_slow",
  py_approve: "./py_approve.py:graph",
};

function mixedConfig(extra: Record<string, unknown> = {}): string {
  const sample = JSON.parse(sampleFiles("v1")["langgraph.json"]) as { graphs: Record<string, string> };
  return JSON.stringify(
    {
      ...sample,
      graphs: { ...sample.graphs, py_agent: "./py/src/pyagent/graph.py:graph", ...TWIN_GRAPHS },
      dependencies: [".", "./py"],
      pip_config_file: "pip.conf",
      dockerfile_lines: ["RUN apt-get update && apt-get install -y curl"],
      ...extra,
    },
    null,
    2,
  );
}

/** What one language's trio showed the clients (python-wire-flows.py's object). */
type Seen = { sdk: Record<string, any>; remote: Record<string, any> };

async function wireFlows(url: string, apiKey: string, label: string, ...graphs: string[]): Promise<Seen> {
  const { stdout } = await promisify(execFile)(inject("pythonPath"), [WIRE_FLOWS, url, apiKey, label, ...graphs], { timeout: 180_000 });
  return JSON.parse(stdout);
}

/** What LangGraph's two libraries yield differently, whatever serves them: taken out before the two are compared. */
function withoutLibraryDifferences(seen: Seen): Seen {
  const copy = structuredClone(seen);
  // A message chunk serializes as type "ai" in JS and as its class name in Python; a task's start has `interrupts` in JS only.
  delete copy.sdk.stream.modes.messages_are_chunks;
  delete copy.sdk.stream.modes.tasks;
  // Python's values chunk at an interrupt carries the state beside `__interrupt__`; JS's only the interrupt.
  delete copy.remote.interrupted;
  return copy;
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
  let url: string;
  /** What each language's trio showed the Python SDK and RemoteGraph at the deployment's URL, both run at once on first use. */
  let wire: Promise<{ js: Seen; py: Seen }> | undefined;
  const seen = () =>
    (wire ??= Promise.all([
      wireFlows(url, cp.apiKey!, "js", "agent", "slow", "approve"),
      wireFlows(url, cp.apiKey!, "py", "py_chat", "py_slow", "py_approve"),
    ]).then(([js, py]) => ({ js, py })));

  beforeAll(async () => {
    seedPythonWheels(PACKAGE_CACHE);
    root = mkdtempSync(join(tmpdir(), "slipway-deploy-python-"));
    repo = new TestRepository(join(root, "repos"), "mixed");
    writeSampleProject(repo.work, "v1");
    cpSync(FIXTURE, repo.work, { recursive: true });
    repo.commit({ "langgraph.json": mixedConfig(), ...twinFiles() }, "JS and Python graphs");
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

    url = created.body.url;
    client = new Client({ apiUrl: url, apiKey: cp.apiKey });
    expect(await client.runs.wait(null, "py_agent", { input: { text: "hello" } })).toEqual({ text: "hello", reply: "python v1: hello" });
    expect(await client.runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });
  }, 420_000);

  it.each(["js", "py"] as const)(
    "%s: the Python SDK creates and searches threads, streams every mode, joins, and reads state and history",
    async (language) => {
      const { sdk } = (await seen())[language];
      const you = (text: string) => [
        ["human", text],
        ["ai", `You said: ${text}`],
      ];
      expect(sdk.thread).toMatchObject({ status: "idle", found: true });
      expect(sdk.stream.modes).toMatchObject({
        first: "metadata",
        events: ["checkpoints", "debug", "messages", "metadata", "tasks", "updates", "values"],
        values: you("hi"),
        updates: [["agent"]],
        messages_text: "You said: hi",
        debug: ["checkpoint", "checkpoint", "task", "task_result", "checkpoint"],
      });
      // Each checkpoint event names its parent, but the first.
      expect(sdk.stream.modes.checkpoints.map((c: unknown[]) => c[2])).toEqual([false, true, true]);
      expect(sdk.stream.messages.events).toEqual(["messages/complete", "messages/metadata", "messages/partial", "metadata"]);
      expect(sdk.stream.messages.complete.at(-1)).toEqual(["ai", "You said: words"]);
      expect(sdk.stream.events).toMatchObject({ streamed_text: "You said: events", first: "on_chain_start", last: "on_chain_end" });
      expect(sdk.join).toMatchObject({ values: you("joined"), status: "success" });
      expect(sdk.state).toMatchObject({
        values: [...you("hi"), ...you("words"), ...you("events"), ...you("joined")],
        next: [],
        history_newest_is_state: true,
        history_chained: true,
        before: true,
      });
    },
    240_000,
  );

  it.each(["js", "py"] as const)(
    "%s: resumes a stream after Last-Event-ID, applies reject and interrupt, cancels, and resumes an interrupt with a Command",
    async (language) => {
      const { sdk, remote } = (await seen())[language];
      expect(sdk.resume_stream).toEqual({
        first: ["metadata", "updates"],
        rest_ticks: [[3], [2], [1]],
        whole_ticks: [[4], [3], [2], [1]],
        joined_is_whole: true,
        ids_increase: true,
        ids_present: true,
      });
      expect(sdk.strategies).toEqual({
        first_running: "running",
        reject: [409, 'Thread <id> is busy with run <id>; multitask_strategy "reject" refuses new runs'],
        interrupt: { first: "interrupted", second: "success", second_values: { steps: 0, last_tick: 1 } },
        cancel: { status: "interrupted", thread: "interrupted" },
        released: "success",
      });
      expect(sdk.interrupt).toMatchObject({
        next: ["ask"],
        thread_status: "interrupted",
        task: ["ask", null, [{ question: "approve deploy?" }]],
        resumed: { request: "deploy", approved: true },
        after: "idle",
      });
      expect(remote).toMatchObject({
        invoked: [
          ["human", "remote"],
          ["ai", "You said: remote"],
        ],
        updates: [["agent"]],
        state_next: [],
        history_newest_is_state: true,
        resumed: { request: "ship", approved: true },
      });
    },
    240_000,
  );

  it("shows the Python SDK and RemoteGraph the same wire for a Python graph as for its JS twin", async () => {
    const { js, py } = await seen();
    expect(withoutLibraryDifferences(py)).toEqual(withoutLibraryDifferences(js));
  }, 240_000);

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
