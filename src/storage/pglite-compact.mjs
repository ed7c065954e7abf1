// @ts-check
// A new embedded cluster made small (decision 0046). PGlite's initdb writes three
// databases of about 7 MB each (template0, template1, postgres) and WAL in 16 MB
// segments; PGlite only ever connects to `postgres`, and a deployment's database never
// creates another database, so the templates are dropped and WAL is written in 1 MB segments.
import { PGlite } from "@electric-sql/pglite";

/** initdb's arguments for a new cluster: WAL in segments of 1 MB instead of 16. */
export const NEW_CLUSTER_INITDB = ["--wal-segsize=1"];

/**
 * How much WAL a cluster keeps. PGlite has no checkpointer: a checkpoint is taken when
 * max_wal_size of WAL has been written (PostgreSQL's default, 1 GB, would stay on disk),
 * and with wal_recycle off finished segments are removed, not renamed ahead for reuse
 * (a new 1 MB segment costs next to nothing to make).
 */
const WAL_SETTINGS = { min_wal_size: "2MB", max_wal_size: "64MB", wal_recycle: "off" };

/** Start parameters for the instance that compacts a new cluster, so its own checkpoint follows the same limits. */
export const NEW_CLUSTER_START = [...PGlite.defaultStartParams, ...Object.entries(WAL_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`])];

/**
 * Drops the template databases, stores the WAL limits in postgresql.auto.conf, takes a
 * checkpoint and removes the WAL segments made ready ahead of the insert point (the
 * checkpoint recycled initdb's into them): none holds anything, and PostgreSQL makes a
 * segment again when it needs one.
 * @param {PGlite} pg
 */
export async function compactNewCluster(pg) {
  for (const name of ["template0", "template1"]) {
    await pg.exec(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false IS_TEMPLATE false`);
    await pg.exec(`DROP DATABASE ${name}`);
  }
  for (const [name, value] of Object.entries(WAL_SETTINGS)) await pg.exec(`ALTER SYSTEM SET ${name} = '${value}'`);
  await pg.exec("CHECKPOINT");
  const [{ current }] = /** @type {{ current: string }[]} */ ((await pg.query("SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS current")).rows);
  const fs = pg.Module.FS;
  const walDir = `${PGlite.paths.PGDATA}/pg_wal`;
  for (const name of fs.readdir(walDir)) {
    if (/^[0-9A-F]{24}$/.test(name) && name > current) fs.unlink(`${walDir}/${name}`);
  }
}
