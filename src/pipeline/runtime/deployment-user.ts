import { createHash } from "node:crypto";
import { lchown, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Uids from here up are given to deployments: far above any system's or person's account. */
const FIRST_UID = 0x10000000;

/**
 * The unprivileged uid a deployment's code runs as (sandbox level own-user). Derived
 * from the deployment id, so every control plane node sharing a database picks the
 * same one and nothing has to be stored; 28 bits make two deployments of one machine
 * sharing a uid unlikely (about 1 in 500 among 500 deployments), and even then the
 * mount namespace still keeps each out of the other's files.
 */
export function deploymentUid(deploymentId: string): number {
  return FIRST_UID + (parseInt(createHash("sha256").update(deploymentId).digest("hex").slice(0, 7), 16) & 0x0fffffff);
}

/**
 * Gives a tree to a uid (a source tree its build writes in), symlinks themselves, not
 * their targets. Asynchronous: a node_modules tree holds thousands of files, and the
 * control plane's event loop serves requests meanwhile.
 */
export async function chownTree(path: string, uid: number): Promise<void> {
  await lchown(path, uid, uid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid);
    else await lchown(child, uid, uid);
  }
}
