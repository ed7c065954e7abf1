import { createReadStream, mkdirSync, rmSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { posix } from "node:path";
import { pipeline, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { Unpack, type ReadEntry } from "tar";
import { TarballRefused, TarWalk, type WalkedEntry } from "./tar-walk.ts";

export { TarballRefused } from "./tar-walk.ts";

/**
 * Uploaded sources are gzipped tarballs of a project directory. What may be in one:
 * regular files and directories, with relative paths that stay inside the tree. Links,
 * devices, entries of any other type (GNU sparse files, types tar does not know) and
 * paths that leave the tree (`../`, absolute) make the whole upload refused rather than
 * silently skipped, so what builds is what the author sent.
 *
 * Checking and unpacking stream: the archive is inflated by zlib off the event loop (its
 * thread pool), a chunk at a time, and read header by header (tar-walk.ts); no more than
 * a chunk and a header are held, and other requests are served between chunks.
 */

/** Beyond these, an upload is refused: a small tarball must not expand into a full disk. */
const MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024;
const MAX_ENTRIES = 200_000;
/**
 * A source tree compresses 3 to 10 times; a stream of zeros a thousand times. An archive
 * may expand to MAX_RATIO times its compressed size, or to RATIO_FLOOR_BYTES when that
 * is more (small projects with a large generated file), never past MAX_UNPACKED_BYTES.
 */
const MAX_RATIO = 100;
const RATIO_FLOOR_BYTES = 128 * 1024 * 1024;

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

/** Reads every entry of `file` (a .tar.gz, or a plain .tar) and throws TarballRefused at the first one not allowed. */
export async function checkTarball(file: string): Promise<{ entries: number; unpackedBytes: number }> {
  const compressed = (await stat(file)).size;
  const budget = Math.min(MAX_UNPACKED_BYTES, Math.max(RATIO_FLOOR_BYTES, MAX_RATIO * compressed));
  let entries = 0;
  let unpackedBytes = 0;
  const walk = new TarWalk((entry: WalkedEntry) => {
    entries++;
    unpackedBytes += entry.size;
    const problem =
      entryProblem(entry) ??
      (entries > MAX_ENTRIES ? `more than ${MAX_ENTRIES} entries` : undefined) ??
      (unpackedBytes > MAX_UNPACKED_BYTES ? `unpacks to more than ${MAX_UNPACKED_BYTES / 1024 ** 3} GiB` : undefined);
    if (problem) throw new TarballRefused(problem);
  });
  let expanded = 0;
  await readArchive(file, async (chunks) => {
    for await (const chunk of chunks) {
      expanded += chunk.length;
      if (expanded > budget) {
        throw new TarballRefused(
          `it expands to more than ${megabytes(budget)} MB, over ${MAX_RATIO} times its compressed ${megabytes(compressed)} MB (a decompression bomb?)`,
        );
      }
      walk.write(chunk);
    }
    walk.end();
  });
  if (entries === 0) throw new TarballRefused("the tarball is empty");
  return { entries, unpackedBytes };
}

/** Unpacks a checked tarball into `dir` (emptied first); refuses again whatever checkTarball would. */
export async function unpackTarball(file: string, dir: string): Promise<void> {
  await checkTarball(file);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const unpack = new Unpack({
    cwd: dir,
    strict: true,
    preservePaths: false,
    // Not the uploader's owners and modes beyond the executable bit.
    preserveOwner: false,
    chmod: true,
    filter: (path, entry) => entryProblem({ path, type: (entry as ReadEntry).type }) === undefined,
  });
  const done = new Promise<void>((resolve, reject) => {
    unpack.on("close", resolve);
    unpack.on("error", reject);
  });
  await readArchive(file, async (chunks) => {
    for await (const chunk of chunks) {
      if (!unpack.write(chunk)) await new Promise((resolve) => unpack.once("drain", resolve));
    }
    unpack.end();
  });
  await done;
}

/**
 * Streams `file`'s tar bytes into `sink`: inflated by zlib's async stream when gzipped, as
 * they are otherwise. The sink's own refusal is kept as it is; a read or inflate error
 * means the file is no archive.
 */
async function readArchive(file: string, sink: (chunks: AsyncIterable<Buffer>) => Promise<void>): Promise<void> {
  const gzipped = await isGzip(file);
  const source = createReadStream(file);
  const bytes: Readable = gzipped ? pipeline(source, createGunzip(), () => undefined) : source;
  try {
    await sink(bytes);
  } catch (error) {
    if (error instanceof TarballRefused) throw error;
    throw new TarballRefused(`not a readable .tar.gz (${(error as Error).message})`);
  } finally {
    bytes.destroy();
    source.destroy();
  }
}

async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);
}
