import { mkdirSync, rmSync } from "node:fs";
import { posix } from "node:path";
import { extract, list, type ReadEntry } from "tar";

/**
 * Uploaded sources are gzipped tarballs of a project directory. What may be in one:
 * regular files and directories, with relative paths that stay inside the tree. Links,
 * devices and paths that leave the tree (`../`, absolute) make the whole upload refused
 * rather than silently skipped, so what builds is what the author sent.
 */

/** Beyond these, an upload is refused: a small tarball must not expand into a full disk. */
const MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024;
const MAX_ENTRIES = 200_000;

export class TarballRefused extends Error {}

/** Why an entry may not be unpacked, or undefined when it may. */
export function entryProblem(entry: { path: string; type: string }): string | undefined {
  if (entry.type !== "File" && entry.type !== "OldFile" && entry.type !== "ContiguousFile" && entry.type !== "Directory") {
    return `${entry.path}: ${entry.type === "SymbolicLink" || entry.type === "Link" ? "links" : `entries of type ${entry.type}`} are not allowed in an uploaded source`;
  }
  const path = entry.path.replace(/\\/g, "/");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return `${entry.path}: absolute paths are not allowed`;
  if (path.split("/").includes("..")) return `${entry.path}: paths that leave the tree are not allowed`;
  if (path.includes("\0")) return `${JSON.stringify(entry.path)}: NUL in a path is not allowed`;
  const normal = posix.normalize(path);
  if (normal.startsWith("../")) return `${entry.path}: paths that leave the tree are not allowed`;
  return undefined;
}

/** Reads every entry of `file` (a .tar.gz) and throws TarballRefused at the first one not allowed. */
export async function checkTarball(file: string): Promise<{ entries: number; unpackedBytes: number }> {
  let entries = 0;
  let unpackedBytes = 0;
  let problem: string | undefined;
  const seen = (entry: ReadEntry) => {
    entries++;
    unpackedBytes += entry.size ?? 0;
    problem ??= entryProblem(entry);
    if (!problem && entries > MAX_ENTRIES) problem = `more than ${MAX_ENTRIES} entries`;
    if (!problem && unpackedBytes > MAX_UNPACKED_BYTES) problem = `unpacks to more than ${MAX_UNPACKED_BYTES / 1024 ** 3} GiB`;
    entry.resume();
  };
  try {
    await list({ file, onReadEntry: seen, strict: true });
  } catch (error) {
    throw new TarballRefused(`not a readable .tar.gz (${(error as Error).message})`);
  }
  if (problem) throw new TarballRefused(problem);
  if (entries === 0) throw new TarballRefused("the tarball is empty");
  return { entries, unpackedBytes };
}

/** Unpacks a checked tarball into `dir` (emptied first); refuses again whatever checkTarball would. */
export async function unpackTarball(file: string, dir: string): Promise<void> {
  await checkTarball(file);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await extract({
    file,
    cwd: dir,
    strict: true,
    preservePaths: false,
    // Not the uploader's owners and modes beyond the executable bit.
    preserveOwner: false,
    noChmod: false,
    filter: (path, entry) => entryProblem({ path, type: (entry as ReadEntry).type }) === undefined,
  });
}
