/** The file PGlite (and PostgreSQL) look for to tell a cluster from an empty directory. */
export const CLUSTER_MARKER = "PG_VERSION";

/** The template's entries are absolute (`/base/5/…`, as PGlite dumps them): relative to the data directory. */
const inCluster = (path: string) => path.replace(/^\/+/, "");

/**
 * Unpacks an empty cluster (a template written by `writePgliteTemplate`) into `dataDir`,
 * here rather than on the database's thread: PGlite's own `loadDataDir` keeps the whole
 * tarball (9 MB) in the thread for as long as the database is open, and leaves as much
 * again of freed copies behind in that thread's allocator. `PG_VERSION` comes last, so
 * an unpacking cut short (a crash) leaves a directory that is unpacked again at the next
 * open instead of a cluster with files missing.
 */
export async function unpackTemplate(template: string, dataDir: string): Promise<void> {
  // Loaded here: a control plane restarted on its data directory unpacks nothing (decision 0054).
  const { extract } = await import("tar");
  const options = { file: template, cwd: dataDir, preserveOwner: false };
  await extract({ ...options, filter: (path) => inCluster(path) !== CLUSTER_MARKER });
  await extract({ ...options, filter: (path) => inCluster(path) === CLUSTER_MARKER });
}
