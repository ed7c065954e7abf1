import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendName } from "../support/backends.ts";
import { schemaOf, storageSocketPath } from "../../src/pipeline/runtime/deployment-storage.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { databaseSockets, listeningSockets } from "./agent-socket.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { writeSampleProject } from "./sample-project.ts";

/**
 * Deployment isolation (docs/decisions/0030), with real parts: two deployments of the
 * escape-probe fixture on one `slipway up` (root; bubblewrap and control groups on the
 * local runtime, containers on the Docker runtime), on the storage back ends given. The
 * probe, run in one, tries every way out it is given a target for: each attempt must be
 * denied. Then one deployment runs a memory bomb, a fork bomb and a disk filler, each
 * contained, while the other's seed flow goes on passing.
 */
const SLOW = 900_000;
const PROBE = fileURLToPath(new URL("../fixtures/escape-probe/", import.meta.url));

interface Deployed {
  id: string;
  url: string;
  revision: string;
  client: Client;
}

export interface EscapeProbeRuntime {
  name: "local" | "docker";
  /** Arguments of `slipway up` that choose it. */
  args: () => string[];
  /** What `slipway up --json` says of its isolation. */
  announces: string;
  /** Its own build is at its host path (the local sandbox), so the probe skips it; a container has it elsewhere. */
  ownBuildAtHostPath: boolean;
  /**
   * PID 1 of its namespace is the deployment's own (a container's init runs as the
   * container's user, with the container's environment): signalling it is a no-op (the
   * kernel shields a namespace's init) and its environment is the agent's own. In the
   * local sandbox it is bubblewrap, as root: both are denied.
   */
  initIsOwn: boolean;
  /** Removes what the runtime keeps beyond the control plane's life (a Docker runtime's images). */
  cleanUp?: (dataDir: string) => void;
}

export function describeEscapeProbe(runtime: EscapeProbeRuntime, backends: BackendName[]): void {
  describe.each(backends)(`deployments isolated from the control plane and from each other, on the ${runtime.name} runtime, on %s`, (backend) => {
    let root: string;
    let git: GitServer;
    let cp: ControlPlaneProcess;
    let cpApi: Api;
    let probe: Deployed;
    let other: Deployed;
    const controlSchema = `cp_iso_${Math.random().toString(36).slice(2, 10)}`;

    const deploy = async (name: string): Promise<Deployed> => {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name,
        source: "github",
        // A small memory limit: the memory bomb meets it soon.
        source_config: { repo_url: git.url("probe"), deployment_type: "dev", build_on_push: false, resource_spec: { min_scale: 1, memory_limit_mb: 512 } },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
      const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
      if (revision.status !== "DEPLOYED") {
        throw new Error(
          `${name}: ${revision.status}\n${(await cpApi.logs(created.body.id, revision.id, "build")).join("\n")}\n${(await cpApi.logs(created.body.id, revision.id, "deploy")).join("\n")}`,
        );
      }
      const url = (await cpApi.call("GET", `/v2/deployments/${created.body.id}`)).body.url as string;
      return { id: created.body.id, url, revision: revision.id, client: new Client({ apiUrl: url, apiKey: cp.apiKey }) };
    };

    const seedFlow = async (deployment: Deployed) => {
      const thread = await deployment.client.threads.create();
      const values = await deployment.client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "still here?" }] } });
      return (values as { messages: Array<{ content: string }> }).messages.length;
    };

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), "slipway-isolation-"));
      const repo = new TestRepository(join(root, "repos"), "probe");
      writeSampleProject(repo.work, "v1");
      cpSync(PROBE, repo.work, { recursive: true });
      repo.commit({}, "escape probe");
      git = await startGitDaemon(join(root, "repos"));
      cp = await startPipelineControlPlane(root, {
        backend,
        args: runtime.args(),
        env: { SLIPWAY_STOP_GRACE_SECONDS: "3", SLIPWAY_CONTROL_SCHEMA: controlSchema },
      });
      cpApi = api(cp);
      [probe, other] = await Promise.all([deploy("probe"), deploy("other")]);
    }, SLOW);

    afterAll(async () => {
      await cp?.kill("SIGTERM");
      runtime.cleanUp?.(join(root, "cp"));
      await git?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it(
      "denies every escape the probe tries: files, processes, sockets, databases, the control plane's API, writes",
      async () => {
        const data = join(root, "cp");
        expect(cp.output()).toContain(runtime.announces);
        const otherLog = (await cpApi.logs(other.id, other.revision, "deploy")).join("\n");
        const targets = {
          secrets_key: join(data, "secrets.key"),
          control_db: join(data, "control-db"),
          other_builds: readdirSync(join(data, "builds")).map((key) => join(data, "builds", key)),
          other_data: join(data, "deployments", other.id),
          other_sockets: [...listeningSockets(otherLog), ...databaseSockets(otherLog), ...(backend === "pglite" ? [storageSocketPath(data, other.id)] : [])],
          control_plane_url: cp.url,
          control_plane_pid: cp.child.pid!,
          ...(backend === "postgres" ? { control_schema: controlSchema, other_schema: schemaOf(other.id) } : {}),
          // The suite's server trusts loopback: only a runtime that keeps loopback from its agents can deny this one.
          ...(backend === "postgres" && runtime.name === "docker" ? { login_as: "postgres" } : {}),
        };
        // What the probe aims at exists, as the control plane sees it.
        expect(existsSync(targets.secrets_key)).toBe(true);
        expect(targets.other_builds.length).toBe(2);
        expect(targets.other_sockets.length).toBeGreaterThanOrEqual(1);
        for (const socket of targets.other_sockets) expect(existsSync(socket)).toBe(true);

        const { results } = (await probe.client.runs.wait(null, "probe", { input: { targets } })) as { results: Record<string, string> };
        const attempts = [
          "read_secrets_key",
          "list_control_database",
          ...targets.other_builds.slice(runtime.ownBuildAtHostPath ? 1 : 0).map((_, index) => `read_other_build_${index}`),
          "list_other_data",
          "list_processes",
          "signal_control_plane",
          "signal_sandbox_init",
          "read_init_environment",
          "control_plane_api",
          "control_plane_api_with_agent_key",
          "secrets_key_in_environment",
          "become_superuser",
          "write_build",
          "write_system",
          "write_beside_secrets_key",
          ...targets.other_sockets.map((_, index) => `connect_other_socket_${index}`),
          ...(backend === "postgres" ? ["read_control_tables", "read_other_deployment_tables"] : []),
          ...("login_as" in targets ? ["login_as_other_role"] : []),
        ];
        expect(Object.keys(results).sort()).toEqual([...attempts].sort());
        const ownInit = runtime.initIsOwn ? ["signal_sandbox_init", "read_init_environment"] : [];
        const allowed = Object.entries(results).filter(([attempt, outcome]) => !outcome.startsWith("denied") && !ownInit.includes(attempt));
        expect(allowed).toEqual([]);
        // What its init's environment holds is its own: nothing of the control plane's.
        expect(results.read_init_environment).not.toMatch(/SLIPWAY_SECRETS_KEY|SLIPWAY_DATABASE_URL=postgres:\/\/postgres@|SLIPWAY_CONTROL_SCHEMA/);
        // Denied for the right reasons: out of sight, not merely refused.
        expect(results.read_secrets_key).toBe("denied (ENOENT)");
        expect(results.read_other_build_0).toBe("denied (ENOENT)");
        expect(results.signal_control_plane).toBe("denied (ESRCH)");
        expect(results.write_build).toBe("denied (EROFS)");
        if (backend === "postgres") {
          expect(results.read_control_tables).toBe("denied (42501)");
          expect(results.become_superuser).toBe("denied (42501)");
          if ("login_as" in targets) expect(results.login_as_other_role).toBe("denied (28000)");
        } else {
          expect(results.become_superuser).toBe("denied (NO_CREDENTIALS)");
        }
      },
      SLOW,
    );

    it(
      "contains a memory bomb, a fork bomb and a disk filler, and says why, while the other deployment serves",
      async () => {
        expect(await seedFlow(other)).toBeGreaterThan(1);

        const disk = (await probe.client.runs.wait(null, "disk_filler", { input: {} })) as { report: { written_mb: number; stopped: string; build: string } };
        expect(disk.report.stopped).toBe("ENOSPC");
        expect(disk.report.written_mb).toBeLessThanOrEqual(256);
        expect(disk.report.build).toBe("EROFS");

        const forks = (await probe.client.runs.wait(null, "fork_bomb", { input: {} })) as { report: { started: number; refused: string | null } };
        expect(forks.report.refused).toBe("EAGAIN");
        expect(forks.report.started).toBeLessThan(512);
        expect(await seedFlow(other)).toBeGreaterThan(1);

        // The bomb's process is killed by the kernel; the run is not waited for (it would be retried).
        await probe.client.runs.create(null, "memory_bomb", { input: {} });
        const deadline = Date.now() + 120_000;
        let log = "";
        while (!log.includes("ran out of memory") && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          log = (await cpApi.logs(probe.id, probe.revision, "deploy")).join("\n");
        }
        expect(log).toContain("stopped by its resource limits: it ran out of memory (limit 512 MB)");
        expect(await seedFlow(other)).toBeGreaterThan(1);
        const status = await cpApi.call("GET", `/v2/deployments/${other.id}`);
        expect(status.status).toBe(200);
      },
      SLOW,
    );
  });
}
