import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { seedPythonWheels } from "../support/python-env.ts";
import { startPipelineControlPlane } from "../pipeline/control-plane.ts";

/**
 * `slipway deploy` (the real CLI, uploading a directory) of a Python project to a control
 * plane whose storage is the suite's PostgreSQL server: the upload leaves out the
 * project's .venv, __pycache__ and what .gitignore names, the Python graph serves the
 * official SDK, and the deployment's threads live in its schema on that server.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));
const PACKAGE_CACHE = join(tmpdir(), "slipway-test-package-cache");

describe("slipway deploy of a Python project, on PostgreSQL", () => {
  let root: string;
  let cp: ControlPlaneProcess;

  beforeAll(async () => {
    // Builds install offline from the wheels the Python suites share (see deploy-python.test.ts).
    seedPythonWheels(PACKAGE_CACHE);
    root = mkdtempSync(join(tmpdir(), "slipway-deploy-python-pg-"));
    cp = await startPipelineControlPlane(root, { backend: "postgres", env: { PIP_FIND_LINKS: undefined } });
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("uploads the project without .venv, __pycache__ or ignored files, serves its graph, and keeps its threads in PostgreSQL", async () => {
    const project = join(root, "py-echo");
    mkdirSync(join(project, ".venv", "bin"), { recursive: true });
    mkdirSync(join(project, "__pycache__"));
    copyFileSync(fixture("python-agent/echo.py"), join(project, "echo.py"));
    copyFileSync(fixture("python-deploy/pip.conf"), join(project, "pip.conf"));
    writeFileSync(join(project, "langgraph.json"), JSON.stringify({ dependencies: ["."], graphs: { echo: "./echo.py:graph" }, pip_config_file: "pip.conf" }));
    writeFileSync(join(project, ".venv", "bin", "python"), "a local environment, made again by the build");
    writeFileSync(join(project, "__pycache__", "x.pyc"), "bytecode");
    writeFileSync(join(project, ".gitignore"), "notes.txt\n");
    writeFileSync(join(project, "notes.txt"), "not for the server");

    const { stdout } = await promisify(execFile)(process.execPath, ["bin/slipway.js", "deploy", project, "--json", "--timeout", "240"], {
      cwd: ROOT,
      env: { ...process.env, SLIPWAY_URL: cp.url, SLIPWAY_API_KEY: cp.apiKey!, SLIPWAY_TENANT_ID: cp.workspaceId!, SLIPWAY_CONFIG_DIR: join(root, "config") },
      timeout: 300_000,
    });
    const events = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; [key: string]: unknown });
    expect(events.filter((e) => e.event === "status_change").at(-1)).toMatchObject({ to: "DEPLOYED" });
    const result = events.at(-1)!;
    expect(result).toMatchObject({ event: "result", outcome: "deployed", exit_code: 0 });
    const url = result.url as string;
    const deploymentId = url.split("/").at(-1)!;

    // The tarball the control plane received and built from.
    const uploads = join(root, "cp", "uploads", deploymentId);
    const [tarball] = readdirSync(uploads);
    const packed = execFileSync("tar", ["-tzf", join(uploads, tarball!)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map((path) => path.replace(/^\.\//, ""));
    // The project's own files only: no .venv, __pycache__ or notes.txt (named by .gitignore).
    expect(packed.sort()).toEqual([".gitignore", "echo.py", "langgraph.json", "pip.conf"]);

    const client = new Client({ apiUrl: url, apiKey: cp.apiKey });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", { input: { messages: [{ role: "human", content: "from postgres" }] } });
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const state = await client.threads.getState<{ messages: { type: string; content: string }[] }>(thread.thread_id);
    expect(state.values.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "from postgres"],
      ["ai", "You said: from postgres"],
    ]);

    const db = new pg.Client({ connectionString: inject("databaseUrl") });
    await db.connect();
    try {
      const schema = `deployment_${deploymentId.replace(/-/g, "").toLowerCase()}`;
      const rows = await db.query(`SELECT status FROM "${schema}".threads WHERE thread_id = $1`, [thread.thread_id]);
      expect(rows.rows).toEqual([{ status: "idle" }]);
    } finally {
      await db.end();
    }
  }, 300_000);
});
