import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What one agent process (with everything it forks) may use. */
export interface ProcessLimits {
  memoryBytes: number;
  maxProcesses: number;
  /** CPU time, in cores (resource_spec's cpu_limit, else cpu); none: unbounded. */
  cpus?: number;
}

/** The CFS period the CPU quota is a share of (the kernel's default, as Docker's --cpus uses). */
const CPU_PERIOD_US = 100_000;

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
 * a fork past it fails with EAGAIN. CPU, when asked, from the cpu controller (v2's
 * `cpu.max`, v1's CFS quota): past it the process is throttled, not killed. Without
 * writable control groups there are none, and `slipway up` says so at start (as it says
 * when the cpu controller alone is missing) (docs/decisions/0030).
 */
export class ResourceLimits {
  private constructor(
    readonly kind: Kind | "none",
    /** Why there are none, for the start-up message. */
    readonly reason: string | undefined,
    private readonly root: string,
    /** Why CPU cannot be limited here, if it cannot (no cpu controller we may write). */
    readonly cpuReason: string | undefined = undefined,
  ) {}

  static probe(root = "/sys/fs/cgroup", env: NodeJS.ProcessEnv = process.env): ResourceLimits {
    if (env.SLIPWAY_RESOURCE_LIMITS === "off") return new ResourceLimits("none", "SLIPWAY_RESOURCE_LIMITS=off", root);
    if (process.platform !== "linux") return new ResourceLimits("none", `control groups need Linux (this is ${process.platform})`, root);
    const kind: Kind | undefined = existsSync(join(root, "cgroup.controllers")) ? "v2" : existsSync(join(root, "memory", "cgroup.procs")) ? "v1" : undefined;
    if (!kind) return new ResourceLimits("none", `no control group hierarchy with memory and pids at ${root}`, root);
    const limits = new ResourceLimits(kind, undefined, root);
    try {
      limits.create(`probe-${process.pid}`, { memoryBytes: 64 << 20, maxProcesses: 8 }).remove();
    } catch (error) {
      return new ResourceLimits("none", `control groups are not writable here (${(error as Error).message})`, root);
    }
    try {
      limits.create(`probe-cpu-${process.pid}`, { memoryBytes: 64 << 20, maxProcesses: 8, cpus: 0.5 }).remove();
      return limits;
    } catch (error) {
      return new ResourceLimits(kind, undefined, root, `the cpu controller is not writable here (${(error as Error).message})`);
    }
  }

  /** Whether a CPU limit can be set. */
  get cpu(): boolean {
    return this.kind !== "none" && this.cpuReason === undefined;
  }

  /** A group with these limits; throws when the kernel refuses one. */
  create(name: string, limits: ProcessLimits): LimitGroup {
    if (this.kind === "none") return { procsFiles: [], diagnose: () => undefined, remove: () => undefined };
    return this.kind === "v2" ? this.createV2(name, limits) : this.createV1(name, limits);
  }

  private createV2(name: string, limits: ProcessLimits): LimitGroup {
    const parent = join(this.root, "slipway");
    const controllers = limits.cpus ? "+memory +pids +cpu" : "+memory +pids";
    // Controllers must be handed down from the root to our group, then to its children.
    writeFileSync(join(this.root, "cgroup.subtree_control"), controllers);
    if (!existsSync(parent)) mkdirSync(parent);
    writeFileSync(join(parent, "cgroup.subtree_control"), controllers);
    const dir = join(parent, name);
    mkdirSync(dir, { recursive: true });
    if (limits.cpus) writeFileSync(join(dir, "cpu.max"), `${cpuQuota(limits.cpus)} ${CPU_PERIOD_US}`);
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
    const dirs = [memory, pids];
    if (limits.cpus) {
      const cpu = join(this.root, "cpu", "slipway", name);
      mkdirSync(cpu, { recursive: true });
      dirs.push(cpu);
      writeFileSync(join(cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
      writeFileSync(join(cpu, "cpu.cfs_quota_us"), String(cpuQuota(limits.cpus)));
    }
    return {
      procsFiles: dirs.map((dir) => join(dir, "cgroup.procs")),
      diagnose: () => explain(limits, counter(join(memory, "memory.oom_control"), "oom_kill"), counter(join(pids, "pids.events"), "max")),
      remove: () => removeDirs(dirs),
    };
  }
}

/** Microseconds of CPU per period: `cpus` cores' worth (at least the kernel's minimum of 1 ms). */
function cpuQuota(cpus: number): number {
  return Math.max(1_000, Math.round(cpus * CPU_PERIOD_US));
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
