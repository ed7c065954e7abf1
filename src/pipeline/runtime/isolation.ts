import { chownSync, closeSync, mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { chownTree, deploymentUid } from "./deployment-user.ts";
import type { LimitGroup, ProcessLimits } from "./resource-limits.ts";
import { ResourceLimits } from "./resource-limits.ts";
import { Sandbox, type SandboxedCommand } from "./sandbox.ts";

/** The defaults where resource_spec says nothing: per agent process, everything it forks included. */
export const DEFAULT_LIMITS: ProcessLimits = { memoryBytes: 2048 * 1048576, maxProcesses: 512 };
/** An agent's private /tmp, and a build's. */
const AGENT_TMP_BYTES = 256 << 20;
const BUILD_TMP_BYTES = 1024 << 20;

/** What a deployment's program may see besides the system: read-only and writable directories. */
export interface Confinement {
  deploymentId: string;
  argv: string[];
  cwd: string;
  readOnly?: string[];
  writable?: string[];
  /** Limits of memory and processes (agent processes; builds are bounded by their timeout). */
  limits?: ProcessLimits;
  /** The first stdio slot free for passed directories. */
  firstFd: number;
  kind: "agent" | "build";
}

/** A confined program about to start: spawn `command`, then call `spawned()`; after its exit, `finish()`. */
export interface ConfinedLaunch {
  command: SandboxedCommand;
  spawned(): void;
  /** Why the kernel stopped it, if a limit did; then its groups are removed. */
  finish(): string | undefined;
}

/**
 * How this control plane keeps deployments' code apart (docs/decisions/0030): the
 * sandbox it can build (bubblewrap, with a uid per deployment as root) and the resource
 * limits it can set (control groups). Probed once at start; `describe()` is what
 * `slipway up` prints.
 */
export class Isolation {
  constructor(
    readonly sandbox: Sandbox,
    readonly limits: ResourceLimits,
  ) {}

  static probe(env: NodeJS.ProcessEnv = process.env): Isolation {
    return new Isolation(Sandbox.probe(env), ResourceLimits.probe(undefined, env));
  }

  get sandboxed(): boolean {
    return this.sandbox.level !== "none";
  }

  /** The uid the deployment's code runs as, when it gets one of its own. */
  uidOf(deploymentId: string): number | undefined {
    return this.sandbox.level === "own-user" ? deploymentUid(deploymentId) : undefined;
  }

  /** Creates `path` (mode 0700) for the deployment's code to write in, given to its uid. */
  ownDirectory(deploymentId: string, path: string): void {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    const uid = this.uidOf(deploymentId);
    if (uid !== undefined) chownSync(path, uid, uid);
  }

  /** Gives whole trees to the deployment's uid (what root wrote in a build's source tree and cache). */
  async ownTrees(deploymentId: string, paths: string[]): Promise<void> {
    const uid = this.uidOf(deploymentId);
    if (uid !== undefined) for (const path of paths) await chownTree(path, uid);
  }

  confine(spec: Confinement): ConfinedLaunch {
    let group: LimitGroup | undefined;
    if (spec.limits && this.limits.kind !== "none") {
      group = this.limits.create(`${spec.deploymentId}-${randomBytes(4).toString("hex")}`, spec.limits);
    }
    const command = this.sandbox.command({
      uid: this.uidOf(spec.deploymentId) ?? 65534,
      argv: spec.argv,
      cwd: spec.cwd,
      readOnly: spec.readOnly ?? [],
      writable: spec.writable ?? [],
      tmpBytes: spec.kind === "agent" ? AGENT_TMP_BYTES : BUILD_TMP_BYTES,
      cgroupProcs: group?.procsFiles ?? [],
      firstFd: spec.firstFd,
    });
    return {
      command,
      spawned: () => {
        for (const fd of command.fds.splice(0)) closeSync(fd);
      },
      finish: () => {
        const why = group?.diagnose();
        group?.remove();
        group = undefined;
        return why;
      },
    };
  }

  /** One line for the start-up message. */
  describe(): string {
    const sandbox =
      this.sandbox.level === "own-user"
        ? "deployments run in bubblewrap sandboxes, each as a uid of its own"
        : this.sandbox.level === "namespaces"
          ? "deployments run in bubblewrap sandboxes (user namespaces; not root, so they share this uid)"
          : `deployments are NOT sandboxed: ${this.sandbox.reason}`;
    const limits =
      this.limits.kind === "none"
        ? `no memory, process or CPU limits: ${this.limits.reason}`
        : this.limits.cpu
          ? `memory, process and CPU limits from cgroup ${this.limits.kind}`
          : `memory and process limits from cgroup ${this.limits.kind}; no CPU limits: ${this.limits.cpuReason} (the Docker runtime applies them)`;
    return `${sandbox}; ${limits}`;
  }
}
