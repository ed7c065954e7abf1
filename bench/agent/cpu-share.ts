import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/**
 * Where the CPU of a measured phase went, per run, read from Linux's /proc: the SDK
 * client (this process), the server's main thread, the rest of the server (its other
 * threads, such as the embedded database's, and child processes), the PostgreSQL
 * server's processes, and the whole machine. On two cores these parts compete, so
 * the sum tells how far a phase is from what the machine can do at all.
 */
export interface CpuPerRun {
  clientMs: number;
  serverMainMs: number;
  serverOtherMs: number;
  /** PostgreSQL's postmaster and its children; undefined when the bench did not start it. */
  postgresMs?: number;
  /** Every CPU's busy time (user, system, interrupts) per run. */
  machineBusyMs: number;
  /** Share of the machine's CPU time left idle during the phase. */
  machineIdle: number;
  cpus: number;
  /** Named processes (and what they spawned) the caller asked for, such as a Python worker. */
  partsMs?: Record<string, number>;
}

export interface CpuSample {
  client: number;
  serverMain: number;
  serverOther: number;
  postgres?: number;
  machineBusy: number;
  machineIdle: number;
}

/** /proc counts CPU time in clock ticks of 10 ms (USER_HZ is 100 on Linux). */
const MS_PER_TICK = 10;

interface ProcStat {
  /** The process's own CPU: utime + stime (all its threads, live or ended). */
  ticks: number;
  /** Its ended children's that it waited for: cutime + cstime (theirs include their own children's). */
  reaped: number;
  ppid: number;
}

/** A /proc stat line's CPU ticks and parent pid (the name may hold spaces and parentheses). */
function statOf(path: string): ProcStat | undefined {
  try {
    const text = readFileSync(path, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    return { ticks: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]), ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

type Proc = ProcStat & { pid: number };

function processes(): Proc[] {
  const all: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(`/proc/${name}/stat`);
    if (stat) all.push({ pid: Number(name), ...stat });
  }
  return all;
}

/**
 * Ticks of `root` and every process below it, with the ticks of those that ended and
 * were reaped inside the tree: a PostgreSQL backend whose connection closed, or an
 * autovacuum worker, leaves its CPU in the postmaster's cutime. Without it a process
 * ending between two readings took its CPU with it (the difference could even be negative).
 */
function treeTicks(all: Proc[], root: number): number {
  const below = new Set([root]);
  let total = 0;
  // Parents have lower pids than their children here almost always; loop until stable to be sure.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (below.has(p.pid) || !below.has(p.ppid)) continue;
      below.add(p.pid);
      grew = true;
    }
  }
  for (const p of all) if (below.has(p.pid)) total += p.ticks + p.reaped;
  return total;
}

/** CPU ticks of `pid` and every process below it so far; undefined where /proc is missing. */
export function processTreeTicks(pid: number): number | undefined {
  try {
    return treeTicks(processes(), pid);
  } catch {
    return undefined;
  }
}

/** Every CPU's busy and idle ticks so far (the first line of /proc/stat). */
function machineTicks(): { busy: number; idle: number } {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
  return { busy: user + nice + system + irq + softirq + (steal ?? 0), idle: idle + iowait };
}

/** Every CPU's busy milliseconds so far; undefined off Linux. */
export function machineBusyMs(): number | undefined {
  try {
    return machineTicks().busy * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

/** A reading now; undefined where /proc is missing (not Linux) or the server is gone. */
export function cpuSample(serverPid: number | undefined, postmasterPid: number | undefined): CpuSample | undefined {
  if (!serverPid) return undefined;
  try {
    const machine = machineTicks();
    const all = processes();
    const main = statOf(`/proc/${serverPid}/task/${serverPid}/stat`);
    if (!main) return undefined;
    return {
      // The bench process alone: the servers it started are its children, not the client.
      client: statOf(`/proc/${process.pid}/stat`)!.ticks,
      serverMain: main.ticks,
      serverOther: treeTicks(all, serverPid) - main.ticks,
      postgres: postmasterPid ? treeTicks(all, postmasterPid) : undefined,
      machineBusy: machine.busy,
      machineIdle: machine.idle,
    };
  } catch {
    return undefined;
  }
}

/** Milliseconds per run of each named process tree between two readings of processTreeTicks. */
export function partsPerRun(before: Record<string, number | undefined>, after: Record<string, number | undefined>, runs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ticks] of Object.entries(after)) {
    const was = before[name];
    if (ticks !== undefined && was !== undefined) out[name] = ((ticks - was) * MS_PER_TICK) / runs;
  }
  return out;
}

/** Milliseconds per run between two readings. */
export function cpuPerRun(before: CpuSample, after: CpuSample, runs: number): CpuPerRun {
  const perRun = (ticks: number) => (ticks * MS_PER_TICK) / runs;
  const busy = after.machineBusy - before.machineBusy;
  const idle = after.machineIdle - before.machineIdle;
  return {
    clientMs: perRun(after.client - before.client),
    serverMainMs: perRun(after.serverMain - before.serverMain),
    serverOtherMs: perRun(after.serverOther - before.serverOther),
    postgresMs: after.postgres !== undefined && before.postgres !== undefined ? perRun(after.postgres - before.postgres) : undefined,
    machineBusyMs: perRun(busy),
    machineIdle: idle / Math.max(1, busy + idle),
    cpus: availableParallelism(),
  };
}
