import { existsSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";

/** Where a revision's source is fetched before its build takes it over (builds/.tmp-<id>). */
export const SOURCE_PREFIX = ".tmp-";

/** Removes a fetched source a build did not take over (it failed, or the job stopped). */
export function removeFetchedSource(directory: string | undefined): void {
  if (!directory || !basename(directory).startsWith(SOURCE_PREFIX) || !existsSync(directory)) return;
  try {
    rmSync(directory, { recursive: true, force: true });
  } catch {
    // A step still writing into it (a stopped job): the sweep at the next start takes it.
  }
}

/**
 * Removes the fetched sources a control plane that stopped mid-build left behind. Run at
 * start, before any job: a resumed job fetches its source again. A step of the killed
 * control plane may outlive it and still be writing into one (ENOTEMPTY while it is
 * removed): that one is tried a few times, then left to the next start, rather than
 * stopping this one. Returns the names removed.
 */
export function removeStaleSources(dataDir: string): string[] {
  const builds = join(dataDir, "builds");
  if (!existsSync(builds)) return [];
  const stale = readdirSync(builds).filter((name) => name.startsWith(SOURCE_PREFIX));
  return stale.filter((name) => {
    try {
      rmSync(join(builds, name), { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      return true;
    } catch {
      return false;
    }
  });
}
