import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The embedded database's directory cannot be used: the message says which and why. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirError";
  }
}

/**
 * Makes sure `dir` is a directory this process can write, creating it and its missing
 * parents, before the embedded database opens it: the database reports these problems
 * late and badly (a bare "[object Object]"). Each level is created on its own, because
 * Node's recursive mkdir never returns on filesystems that answer ENOENT for a path
 * whose parent exists (anything under /proc). Writing is proven by writing a file:
 * permission bits do not tell what root may do, nor whether the filesystem is read-only.
 */
export function prepareDataDir(dir: string): void {
  const target = resolve(dir);
  const missing: string[] = [];
  for (let current = target; ; current = dirname(current)) {
    const stats = statOf(current, target);
    if (stats) {
      if (!stats.isDirectory()) {
        throw new DataDirError(`embedded database directory ${target}: ${current === target ? "it" : current} is not a directory`);
      }
      break;
    }
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path);
    } catch (error) {
      if (codeOf(error) === "EEXIST") continue;
      throw new DataDirError(`cannot create the embedded database directory ${target}: ${reason(error)}`);
    }
  }
  const probe = join(target, `.slipway-write-check-${process.pid}`);
  try {
    writeFileSync(probe, "");
    unlinkSync(probe);
  } catch (error) {
    throw new DataDirError(`the embedded database directory ${target} is not writable by this process: ${reason(error)}`);
  }
  lockDataDir(target);
}

/** Names the process that holds an embedded database directory. */
const LOCK_FILE = "slipway.lock";

/**
 * One process at a time per embedded database directory. PGlite takes no lock of its
 * own (PostgreSQL's postmaster.pid is not used in its single-user mode), and two
 * processes writing one cluster corrupt it: a second `slipway agent` or `slipway up` on
 * the same --data-dir is refused, naming the first. The lock file holds the process id
 * and its start time, so a lock left by a process that died (kill -9), or whose id a
 * later process took, is taken over. It is never removed: the holder reopens freely.
 */
function lockDataDir(dir: string): void {
  const file = join(dir, LOCK_FILE);
  const me = `${process.pid} ${startTimeOf(process.pid) ?? ""}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, me, { flag: "wx" });
      return;
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw new DataDirError(`cannot lock the embedded database directory ${dir}: ${reason(error)}`);
    }
    let holder: string;
    try {
      holder = readFileSync(file, "utf8").trim();
    } catch {
      continue; // taken over and removed meanwhile: try again
    }
    const [pid, started] = holder.split(" ");
    if (Number(pid) === process.pid) return;
    if (Number(pid) > 0 && (startTimeOf(Number(pid)) ?? "") === (started ?? "") && isAlive(Number(pid))) {
      throw new DataDirError(
        `the embedded database directory ${dir} is in use by process ${pid} (another slipway up or slipway agent): stop it, or give this one another --data-dir`,
      );
    }
    try {
      unlinkSync(file);
    } catch {
      // another process took it over first
    }
  }
  throw new DataDirError(`cannot lock the embedded database directory ${dir}: other processes keep taking it`);
}

/** When a process started, in clock ticks since boot (Linux); undefined elsewhere or when it is gone. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command's closing parenthesis: state is field 3, starttime field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === "EPERM";
  }
}

function statOf(path: string, target: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    // ENOTDIR: a file stands somewhere above; the walk up finds it and says so.
    if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return undefined;
    throw new DataDirError(`embedded database directory ${target}: cannot look at ${path}: ${reason(error)}`);
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
