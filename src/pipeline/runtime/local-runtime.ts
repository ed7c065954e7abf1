import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { revisionPython } from "../builder/python-link.ts";
import { childEnv } from "../child-env.ts";
import type { PipelineDeps } from "../context.ts";
import { StepFailure } from "../failure.ts";
import { AgentProcess } from "./agent-process.ts";
import { agentEnvironment, replicaShape } from "./agent-env.ts";
import type { DeploymentStorage } from "./deployment-storage.ts";
import { DEFAULT_LIMITS, type Isolation } from "./isolation.ts";
import { RevisionGroup } from "./revision-group.ts";
import { RevisionRotation } from "./revision-rotation.ts";
import type { LaunchSpec } from "./runtime.ts";
import { unsandboxedTenantsRefusal } from "./tenant-guard.ts";

/**
 * Runs deployments as local `slipway agent` processes, each on a Unix socket in a
 * directory only this user may enter (cheaper to proxy to than loopback TCP, and out of
 * reach of other local users: docs/decisions/0018). Which group serves, the switch and
 * the drain are RevisionRotation's.
 *
 * Each process runs in the deployment's sandbox (docs/decisions/0030): its build
 * read-only, its sockets' directory, its storage socket, a private /tmp, and, as root,
 * the deployment's own uid; its memory and processes bounded by control groups.
 */
export class LocalRuntime extends RevisionRotation {
  private socketDir: string | undefined;
  private sockets = 0;

  constructor(
    deps: PipelineDeps,
    storage: DeploymentStorage,
    private readonly isolation: Isolation,
  ) {
    super(deps, storage);
  }

  /** Starts a revision's processes without waiting: a restart serves what was DEPLOYED as soon as it listens. */
  async start(spec: LaunchSpec): Promise<RevisionGroup> {
    const build = spec.build;
    if (!build) throw new StepFailure("DEPLOY_FAILED", "An image source runs only on the Docker runtime (`slipway up --runtime docker`).");
    const refusal = await unsandboxedTenantsRefusal(this.deps.services.tenancy, this.isolation, this.deps.allowUnsandboxed);
    if (refusal) throw new StepFailure("DEPLOY_FAILED", `Refused: ${refusal}`);
    const { count, memoryMb: memory, cpus } = replicaShape(spec);
    const cpuLimited = cpus !== undefined && this.isolation.limits.cpu;
    const limits = { ...DEFAULT_LIMITS, ...(memory ? { memoryBytes: memory * 1048576 } : {}), ...(cpuLimited ? { cpus } : {}) };
    if (cpus !== undefined && !cpuLimited) {
      spec.log.line(
        "WARNING",
        `resource_spec's CPU (${cpus} cores) is not applied on this machine: ${this.isolation.limits.cpuReason ?? this.isolation.limits.reason}. The Docker runtime applies it.`,
      );
    }
    const internalKey = randomBytes(32).toString("base64url");
    const storage = await this.storage.attach(spec.deploymentId, { rotate: spec.rotateCredentials });
    // A Python project's environment (made by its build): its interpreter and local packages.
    const python = revisionPython(build.config_file);
    const env = childEnv(agentEnvironment(this.deps, spec, storage.env, internalKey, memory, python?.env));
    const args = ["--config", build.config_file, ...storage.args];
    const sockets = this.socketDirectory(spec.deploymentId);
    const confine = (argv: string[], firstFd: number) =>
      this.isolation.confine({
        deploymentId: spec.deploymentId,
        kind: "agent",
        argv,
        cwd: build.directory,
        readOnly: [build.directory, ...(python?.readOnly ?? [])],
        writable: [sockets, ...storage.directories].filter(Boolean),
        limits,
        firstFd,
      });
    const processes = Array.from({ length: count }, (_, index) => {
      const name = `${spec.revisionId.slice(0, 8)}#${index + 1}`;
      const file = `${++this.sockets}-${name.replace("#", "-")}`;
      // On Windows, a named pipe.
      const socketPath =
        process.platform === "win32" ? `\\\\.\\pipe\\slipway-${process.pid}-${randomBytes(6).toString("hex")}-${file}` : join(sockets, `${file}.sock`);
      return new AgentProcess({ name, cwd: build.directory, socketPath, args, env, log: spec.log, serverLog: this.deps.log, confine });
    });
    const group = new RevisionGroup(spec.deploymentId, spec.revisionId, processes, internalKey, spec.log);
    this.launched.add(group);
    for (const process_ of processes) process_.start();
    return group;
  }

  /** Stops everything (the control plane shuts down). */
  override async close(): Promise<void> {
    await super.close();
    if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
    this.socketDir = undefined;
  }

  /**
   * Where a deployment's processes listen: a directory of the deployment's own (its uid,
   * mode 0700: no other deployment can reach its sockets) in a directory of this
   * runtime's own, mode 0700, in the temp folder (a socket path must fit in about 100
   * bytes; data directories can be deep).
   */
  private socketDirectory(deploymentId: string): string {
    if (process.platform === "win32") return "";
    if (!this.socketDir) {
      this.socketDir = mkdtempSync(join(tmpdir(), "slipway-agents-"));
      chmodSync(this.socketDir, 0o700);
    }
    const dir = join(this.socketDir, deploymentId.replace(/-/g, "").slice(0, 16));
    this.isolation.ownDirectory(deploymentId, dir);
    return dir;
  }
}
