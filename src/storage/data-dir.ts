import { mkdirSync, statSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
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
