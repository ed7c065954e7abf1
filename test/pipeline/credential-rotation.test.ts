import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { openSecret } from "../../src/auth/secret-box.ts";
import { loadSecretsKey } from "../../src/config/controlplane.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { keepCalling } from "./keep-calling.ts";
import { writeSampleProject } from "./sample-project.ts";
import { startedPids } from "./agent-pids.ts";

/**
 * Rotating a deployment's PostgreSQL credential (docs/decisions/0030), with real parts:
 * `slipway up` on the suite's PostgreSQL (local runtime), two deployments of the sample
 * project, `slipway deployments rotate-credentials --wait` as a user runs it, the
 * official SDK through the deployment's URL while the processes roll. The suite's
 * server trusts loopback, so "refused" here is PostgreSQL's own refusal of a role that
 * may no longer log in, not a password check.
 */
const SLOW = 600_000;
const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));
const run = promisify(execFile);

interface Credential {
  role: string;
  password: string;
}

describe("rotating a deployment's database credential, on postgres", () => {
  let root: string;
  let git: GitServer;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let control: pg.Client;
  const controlSchema = `cp_rot_${Math.random().toString(36).slice(2, 10)}`;

  const deploy = async (name: string, resources: Record<string, number> = {}) => {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name,
      source: "github",
      source_config: {
        repo_url: git.url("agent"),
        deployment_type: "dev",
        build_on_push: false,
        resource_spec: { min_scale: 1, memory_limit_mb: 512, ...resources },
      },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    });
    expect(created.status).toBe(201);
    const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
    expect(revision.status).toBe("DEPLOYED");
    return { id: created.body.id as string, url: created.body.url as string, revision: revision.id as string };
  };

  /** The credential a deployment's processes log in with now, as the control plane keeps it (sealed). */
  const credentialOf = async (deploymentId: string): Promise<Credential> => {
    const { rows } = await control.query(`SELECT role, password_sealed FROM ${controlSchema}.deployment_roles WHERE deployment_id = $1`, [deploymentId]);
    const key = loadSecretsKey(join(root, "cp"), {}).key;
    return { role: rows[0].role, password: openSecret(key, rows[0].password_sealed, `pg-role:${deploymentId}`) };
  };

  /** Logs in with a credential and runs `sql`: its rows, or the error PostgreSQL answered. */
  const asCredential = async (credential: Credential, sql: string): Promise<{ rows?: unknown[]; error?: string; code?: string }> => {
    const url = new URL(inject("databaseUrl"));
    url.username = credential.role;
    url.password = credential.password;
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      return { rows: (await client.query(sql)).rows };
    } catch (error) {
      return { error: (error as Error).message, code: (error as { code?: string }).code };
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-rotation-"));
    const repo = new TestRepository(join(root, "repos"), "agent");
    writeSampleProject(repo.work, "v1");
    repo.commit({}, "v1");
    git = await startGitDaemon(join(root, "repos"));
    cp = await startPipelineControlPlane(root, {
      backend: "postgres",
      env: { SLIPWAY_STOP_GRACE_SECONDS: "3", SLIPWAY_DRAIN_TIMEOUT_SECONDS: "3", SLIPWAY_CONTROL_SCHEMA: controlSchema },
    });
    cpApi = api(cp);
    control = new pg.Client({ connectionString: inject("databaseUrl") });
    await control.connect();
  }, SLOW);

  afterAll(async () => {
    await control?.end();
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "rolls the processes to a new credential with no failed request; the old one is refused, the new one is out of another deployment's reach",
    async () => {
      // The other one with a CPU limit of its own: its process's control group holds it.
      // Both are built at once: they share the package cache, and the test its time.
      const [rotated, other] = await Promise.all([deploy("rotated"), deploy("other", { cpu: 0.25, cpu_limit: 0.5 })]);
      const [otherPid] = startedPids((await cpApi.logs(other.id, other.revision, "deploy")).join("\n"));
      expect(cpuQuotaOf(otherPid)).toEqual({ quotaUs: 50_000, periodUs: 100_000 });
      const client = new Client({ apiUrl: rotated.url, apiKey: cp.apiKey });
      const thread = await client.threads.create();
      const before = await credentialOf(rotated.id);
      expect((await asCredential(before, "SELECT 1 AS ok")).rows).toEqual([{ ok: 1 }]);

      // ── the rotation, through the CLI, while a client keeps calling ──────────────
      const calls = keepCalling(rotated.url, cp.apiKey!, thread.thread_id);
      const env = {
        ...process.env,
        SLIPWAY_URL: cp.url,
        SLIPWAY_API_KEY: cp.apiKey!,
        SLIPWAY_TENANT_ID: cp.workspaceId!,
        SLIPWAY_CONFIG_DIR: join(root, "config"),
      };
      const cli = await run(process.execPath, [BIN, "deployments", "rotate-credentials", "rotated", "--wait", "--timeout", "300"], { env });
      expect(cli.stderr).toMatch(/DEPLOYED/);
      // The replaced processes drain (3 s here), stop, and then their login is taken away.
      let after = await credentialOf(rotated.id);
      for (let i = 0; i < 80 && (await asCredential(before, "SELECT 1")).code !== "28000"; i++) await new Promise((resolve) => setTimeout(resolve, 250));
      await calls.stop();
      expect(Object.fromEntries(calls.statuses)).toEqual({ 200: expect.any(Number) });

      // ── the old credential is refused by PostgreSQL; the new one logs in, as the deployment's owner ──
      after = await credentialOf(rotated.id);
      expect(after.role).not.toBe(before.role);
      expect(after.password).not.toBe(before.password);
      expect(await asCredential(before, "SELECT 1")).toMatchObject({ code: "28000", error: expect.stringContaining("is not permitted to log in") });
      expect((await asCredential(after, "SELECT current_user AS owner")).rows).toEqual([{ owner: before.role }]);

      // ── the deployment still serves, its threads intact ──────────────────────────
      const values = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "after rotation" }] } })) as {
        messages: { content: string }[];
      };
      expect(values.messages.map((m) => m.content)).toContain("You said: after rotation");
      const revisions = (await cpApi.call("GET", `/v2/deployments/${rotated.id}/revisions`)).body.resources as Array<{ id: string }>;
      expect((await cpApi.logs(rotated.id, revisions[0].id, "deploy")).join("\n")).toMatch(/Credential rotation: its processes get a new database credential/);

      // ── another deployment's credential reads nothing of it ──────────────────────
      const others = await credentialOf(other.id);
      expect(await asCredential(others, `SELECT password_sealed FROM ${controlSchema}.deployment_roles`)).toMatchObject({ code: "42501" });
      expect(await asCredential(others, "SELECT rolpassword FROM pg_authid")).toMatchObject({ code: "42501" });
      expect(await asCredential(others, `SET ROLE ${after.role}`)).toMatchObject({ code: "42501" });
      expect(await new Client({ apiUrl: other.url, apiKey: cp.apiKey }).runs.wait(null, "whoami", { input: {} })).toMatchObject({ version: "v1" });
    },
    SLOW,
  );

  it("refuses a rotation with 409 when nothing is deployed, and 404 for an unknown deployment, changing nothing", async () => {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name: "waiting",
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(created.status).toBe(201);
    const refused = await cpApi.call("POST", `/v2/deployments/${created.body.id}/rotate-credentials`);
    expect(refused).toMatchObject({ status: 409, body: { detail: expect.stringContaining("has no deployed revision") } });
    expect((await cpApi.call("GET", `/v2/deployments/${created.body.id}`)).body.latest_revision_id).toBe(created.body.latest_revision_id);
    const unknown = await cpApi.call("POST", "/v2/deployments/00000000-0000-4000-8000-000000000000/rotate-credentials");
    expect(unknown.status).toBe(404);
  });
});

/** The CPU quota of a process's control group (cgroup v1's cpu hierarchy, or v2's cpu.max). */
function cpuQuotaOf(pid: number): { quotaUs: number; periodUs: number } | undefined {
  const lines = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n");
  const v1 = lines.find((line) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(line));
  if (v1) {
    const dir = `/sys/fs/cgroup/cpu${v1.split(":")[2]}`;
    return { quotaUs: Number(readFileSync(`${dir}/cpu.cfs_quota_us`, "utf8")), periodUs: Number(readFileSync(`${dir}/cpu.cfs_period_us`, "utf8")) };
  }
  const v2 = lines.find((line) => line.startsWith("0::"));
  if (!v2) return undefined;
  const [quota, period] = readFileSync(`/sys/fs/cgroup${v2.slice(3)}/cpu.max`, "utf8")
    .trim()
    .split(" ");
  return { quotaUs: Number(quota), periodUs: Number(period) };
}
