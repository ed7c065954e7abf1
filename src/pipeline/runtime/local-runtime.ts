import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { revisionPython } from "../build/python-link.ts";
import { childEnv } from "../child-env.ts";
import type { PipelineDeps } from "../context.ts";
import { StepFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";
import { AgentProcess } from "./agent-process.ts";
import type { DeploymentStorage } from "./deployment-storage.ts";
import { DEFAULT_LIMITS, type Isolation } from "./isolation.ts";
import { RevisionGroup } from "./revision-group.ts";
import type { DeploymentRuntime, LaunchSpec } from "./runtime.ts";
import { unsandboxedTenantsRefusal } from "./tenant-guard.ts";
import { deploymentPathUrl } from "../../controlplane/deployments/records.ts";

/** At most this many processes per revision, whatever resource_spec asks. */
const MAX_PROCESSES = 16;


interface Serving {
  workspaceId: string;
  active?: RevisionGroup;
}

/**
 * Runs deployments as local `slipway agent` processes, each on a Unix socket in a
 * directory only this user may enter (cheaper to proxy to than loopback TCP, and out of
 * reach of other local users: docs/decisions/0018), and says which
 * processes serve each deployment now (the router asks `target`). A new revision is
 * launched beside the serving one; `promote` switches new requests to it at once and
 * retires the previous one: it stops claiming runs, keeps its requests (streams of
 * long runs included) up to the drain timeout, then is asked to stop, gets a grace, and SIGKILL.
 *
 * Each process runs in the deployment's sandbox (docs/decisions/0030): its build
 * read-only, its sockets' directory, its storage socket, a private /tmp, and, as root,
 * the deployment's own uid; its memory and processes bounded by control groups.
 */
export class LocalRuntime implements DeploymentRuntime {
  private readonly serving = new Map<string, Serving>();
  private readonly retiring = new Set<Promise<void>>();
  private readonly launched = new Set<RevisionGroup>();
  private socketDir: string | undefined;
  private sockets = 0;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly storage: DeploymentStorage,
    private readonly isolation: Isolation,
  ) {}

  /**
   * Starts a revision's processes and waits until all answer /ok (or DEPLOY_FAILED). The
   * deployment's storage opens here, with the first revision that has a build to serve,
   * and is let go again when that revision fails with nothing else serving: an embedded
   * database holds about 200 MB, and a deployment whose revisions fail must hold none.
   */
  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<RevisionGroup> {
    let group: RevisionGroup | undefined;
    try {
      group = await this.start(spec);
      await group.ready(this.deps.settings.readinessTimeoutMs, signal);
    } catch (error) {
      if (group) await this.stopGroup(group);
      await this.releaseStorageIfIdle(spec.deploymentId);
      throw error;
    }
    return group;
  }

  /** Starts a revision's processes without waiting: a restart serves what was DEPLOYED as soon as it listens. */
  async start(spec: LaunchSpec): Promise<RevisionGroup> {
    const { settings } = this.deps;
    const refusal = await unsandboxedTenantsRefusal(this.deps.db, this.isolation, this.deps.allowUnsandboxed);
    if (refusal) throw new StepFailure("DEPLOY_FAILED", `Refused: ${refusal}`);
    const count = Math.min(MAX_PROCESSES, Math.max(1, spec.resourceSpec?.min_scale ?? 1));
    const memory = spec.resourceSpec?.memory_limit_mb ?? spec.resourceSpec?.memory_mb;
    const limits = { ...DEFAULT_LIMITS, ...(memory ? { memoryBytes: memory * 1048576 } : {}) };
    const internalKey = randomBytes(32).toString("base64url");
    const storage = await this.storage.attach(spec.deploymentId);
    // The agent's own grace (runs in progress go on, then are handed back) fits inside ours.
    const agentGrace = Math.max(1, Math.floor(settings.stopGraceMs / 1000) - 3);
    const publicUrl = this.deps.publicUrl?.();
    // A Python project's environment (made by its build): its interpreter and local packages.
    const python = revisionPython(spec.build.config_file);
    const env = childEnv({
      // Where graphs (and each run's metadata) find their deployment; a secret may say otherwise.
      ...(publicUrl ? { LANGGRAPH_API_URL: deploymentPathUrl(publicUrl, spec.deploymentId) } : {}),
      ...spec.secrets,
      ...python?.env,
      ...storage.env,
      SLIPWAY_AGENT_API_KEY: internalKey,
      SLIPWAY_SHUTDOWN_GRACE_SECONDS: String(agentGrace),
      // resource_spec's memory bounds the heap; the author's own NODE_OPTIONS are kept.
      NODE_OPTIONS: memory ? [spec.secrets.NODE_OPTIONS, `--max-old-space-size=${memory}`].filter(Boolean).join(" ") : spec.secrets.NODE_OPTIONS,
    });
    const args = ["--config", spec.build.config_file, ...storage.args];
    const sockets = this.socketDirectory(spec.deploymentId);
    const confine = (argv: string[], firstFd: number) =>
      this.isolation.confine({
        deploymentId: spec.deploymentId,
        kind: "agent",
        argv,
        cwd: spec.build.directory,
        readOnly: [spec.build.directory, ...(python?.readOnly ?? [])],
        writable: [sockets, ...storage.directories].filter(Boolean),
        limits,
        firstFd,
      });
    const processes = Array.from({ length: count }, (_, index) => {
      const name = `${spec.revisionId.slice(0, 8)}#${index + 1}`;
      const file = `${++this.sockets}-${name.replace("#", "-")}`;
      // On Windows, a named pipe.
      const socketPath = process.platform === "win32" ? `\\\\.\\pipe\\slipway-${process.pid}-${randomBytes(6).toString("hex")}-${file}` : join(sockets, `${file}.sock`);
      return new AgentProcess({ name, cwd: spec.build.directory, socketPath, args, env, log: spec.log, serverLog: this.deps.log, confine });
    });
    const group = new RevisionGroup(spec.deploymentId, spec.revisionId, processes, internalKey, spec.log);
    this.launched.add(group);
    for (const process_ of processes) process_.start();
    return group;
  }

  /** Sends new requests to `group` from now on; the group it replaces is retired. */
  promote(workspaceId: string, group: RevisionGroup): void {
    const serving = this.serving.get(group.deploymentId) ?? { workspaceId };
    const previous = serving.active;
    serving.active = group;
    this.serving.set(group.deploymentId, serving);
    if (previous && previous !== group) this.retire(previous);
  }

  /** What serves a deployment now, if anything. */
  target(deploymentId: string): RevisionGroup | undefined {
    return this.serving.get(deploymentId)?.active;
  }

  /** Stops every process of a deployment (it is being deleted). */
  async stopDeployment(deploymentId: string): Promise<void> {
    const serving = this.serving.get(deploymentId);
    this.serving.delete(deploymentId);
    const groups = [...this.launched].filter((g) => g.deploymentId === deploymentId);
    if (serving?.active && !groups.includes(serving.active)) groups.push(serving.active);
    await Promise.all(groups.map((g) => this.stopGroup(g)));
  }

  /** Stops everything (the control plane shuts down). */
  async close(): Promise<void> {
    const groups = [...this.launched];
    this.serving.clear();
    await Promise.all(groups.map((g) => this.stopGroup(g)));
    await Promise.all([...this.retiring]);
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

  private retire(group: RevisionGroup): void {
    const { drainTimeoutMs } = this.deps.settings;
    group.log.info(`Revision replaced: draining (no new runs; requests in flight may take up to ${Math.round(drainTimeoutMs / 1000)} s).`);
    group.drain();
    const done = (async () => {
      const idle = await group.idle(drainTimeoutMs);
      if (!idle) group.log.line("WARNING", `${group.inFlight} request(s) still open after the drain timeout; stopping anyway.`);
      await this.stopGroup(group);
      await group.log.flush();
    })();
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
  }

  /** Closes the deployment's storage when no process of it runs or starts (its data stays). */
  private async releaseStorageIfIdle(deploymentId: string): Promise<void> {
    if (this.serving.get(deploymentId)?.active) return;
    if ([...this.launched].some((g) => g.deploymentId === deploymentId)) return;
    await this.storage.release(deploymentId);
  }

  /** Stops a group that never served (a revision that failed or was interrupted while starting). */
  async stopGroup(group: RevisionGroup): Promise<void> {
    this.launched.delete(group);
    await group.stop(this.deps.settings.stopGraceMs);
  }
}
