import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What one agent process (with everything it forks) may use. */
export interface ProcessLimits {
  memoryBytes: number;
  maxProcesses: number;
}

/** The control groups of one process: its sandbox joins them, and they tell why it was killed. */
export interface LimitGroup {
  /** cgroup.procs files to write the process's pid into before it starts. */
  procsFiles: string[];
  /** After the process died: "out of memory (limit 256 MB)", "hit its limit of 64 processes", or undefined. */
  diagnose(): string | undefined;
  remove(): void;
}

type Kind = "v2" | "v1";

/**
 * Memory and process-count limits from control groups, version 2 (one hierarchy) or
 * version 1 (the memory and pids hierarchies), whichever this machine lets us write: a
 * `slipway` group of our own with one group per agent process below it. The kernel, not
 * the process, enforces them: an allocation past the limit gets the process OOM-killed,
 * a fork past it fails with EAGAIN. Without writable control groups there are none, and
 * `slipway up` says so at start (docs/decisions/0030).
 */
export class ResourceLimits {
  private constructor(
    readonly kind: Kind | "none",
    /** Why there are none, for the start-up message. */
    readonly reason: string | undefined,
    private readonly root: string,
  ) {}

  static probe(root = "/sys/fs/cgroup", env: NodeJS.ProcessEnv = process.env): ResourceLimits {
    if (env.SLIPWAY_RESOURCE_LIMITS === "off") return new ResourceLimits("none", "SLIPWAY_RESOURCE_LIMITS=off", root);
    if (process.platform !== "linux") return new ResourceLimits("none", `control groups need Linux (this is ${process.platform})`, root);
    const kind: Kind | undefined = existsSync(join(root, "cgroup.controllers")) ? "v2" : existsSync(join(root, "memory", "cgroup.procs")) ? "v1" : undefined;
    if (!kind) return new ResourceLimits("none", `no control group hierarchy with memory and pids at ${root}`, root);
    const limits = new ResourceLimits(kind, undefined, root);
    try {
      limits.create(`probe-${process.pid}`, { memoryBytes: 64 << 20, maxProcesses: 8 }).remove();
      return limits;
    } catch (error) {
      return new ResourceLimits("none", `control groups are not writable here (${(error as Error).message})`, root);
    }
  }

  /** A group with these limits; throws when the kernel refuses one. */
  create(name: string, limits: ProcessLimits): LimitGroup {
    if (this.kind === "none") return { procsFiles: [], diagnose: () => undefined, remove: () => undefined };
    return this.kind === "v2" ? this.createV2(name, limits) : this.createV1(name, limits);
  }

  private createV2(name: string, limits: ProcessLimits): LimitGroup {
    const parent = join(this.root, "slipway");
    if (!existsSync(parent)) {
      // Controllers must be handed down from the root to our group, then to its children.
      writeFileSync(join(this.root, "cgroup.subtree_control"), "+memory +pids");
      mkdirSync(parent);
    }
    writeFileSync(join(parent, "cgroup.subtree_control"), "+memory +pids");
    const dir = join(parent, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
    if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
    writeFileSync(join(dir, "pids.max"), String(limits.maxProcesses));
    return {
      procsFiles: [join(dir, "cgroup.procs")],
      diagnose: () => explain(limits, counter(join(dir, "memory.events"), "oom_kill"), counter(join(dir, "pids.events"), "max")),
      remove: () => removeDirs([dir]),
    };
  }

  private createV1(name: string, limits: ProcessLimits): LimitGroup {
    const memory = join(this.root, "memory", "slipway", name);
    const pids = join(this.root, "pids", "slipway", name);
    mkdirSync(memory, { recursive: true });
    mkdirSync(pids, { recursive: true });
    writeFileSync(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
    // With swap, memory and swap together (where the kernel accounts swap).
    if (existsSync(join(memory, "memory.memsw.limit_in_bytes"))) {
      try {
        writeFileSync(join(memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
      } catch {
        // swap accounting is off: the memory limit alone holds
      }
    }
    writeFileSync(join(pids, "pids.max"), String(limits.maxProcesses));
    return {
      procsFiles: [join(memory, "cgroup.procs"), join(pids, "cgroup.procs")],
      diagnose: () => explain(limits, counter(join(memory, "memory.oom_control"), "oom_kill"), counter(join(pids, "pids.events"), "max")),
      remove: () => removeDirs([memory, pids]),
    };
  }
}

function explain(limits: ProcessLimits, oomKills: number, forkRefusals: number): string | undefined {
  const reasons = [];
  if (oomKills > 0) reasons.push(`it ran out of memory (limit ${Math.round(limits.memoryBytes / 1048576)} MB) and was killed`);
  if (forkRefusals > 0) reasons.push(`it hit its limit of ${limits.maxProcesses} processes and threads (forks were refused)`);
  return reasons.length ? reasons.join("; ") : undefined;
}

/** A `name value` line of a cgroup statistics file, 0 when absent. */
function counter(file: string, name: string): number {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}

function removeDirs(dirs: string[]): void {
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch {
      // a process of it is still exiting: an empty group left behind holds nothing
    }
  }
}
