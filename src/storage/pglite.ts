import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { assertSchemaName, type Database, type Queryable } from "./database.ts";

/**
 * Embedded PostgreSQL. PGlite runs one connection and serialises statements
 * itself, so a transaction here is naturally exclusive.
 */
export async function openPglite(dataDir: string, schema: string): Promise<Database> {
  assertSchemaName(schema);
  const inMemory = dataDir === "memory://" || dataDir === "";
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const pg = inMemory ? new PGlite() : new PGlite(dataDir, templateFor(dataDir));
  await pg.waitReady;
  await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}, public;`);

  const localListeners = new Map<string, Set<(payload: string) => void>>();
  const run = async <Row>(target: Pick<PGlite, "query">, sql: string, params?: readonly unknown[]) => {
    const result = await target.query<Row>(sql, params as unknown[] | undefined);
    return result.rows;
  };

  return {
    kind: "pglite",
    schema,
    query: (sql, params) => run(pg, sql, params),
    transaction: <T>(work: (tx: Queryable) => Promise<T>) =>
      pg.transaction(async (tx) => work({ query: (sql, params) => run(tx, sql, params) })),
    async listen(channel, onPayload) {
      // SQL-level NOTIFY (sent inside transactions, delivered on commit) still comes
      // through PGlite; notify() below is delivered in-process.
      const unsubscribe = await pg.listen(channel, onPayload);
      const set = localListeners.get(channel) ?? new Set();
      localListeners.set(channel, set);
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
        await unsubscribe();
      };
    },
    async notify(channel, payload) {
      // One process owns a PGlite directory, so every listener is in this process:
      // hand the payload over directly instead of a round trip through the database.
      // Asynchronously, like a real NOTIFY, so listeners never run inside the caller.
      const set = localListeners.get(channel);
      if (!set?.size) return;
      setImmediate(() => {
        for (const listener of [...set]) listener(payload);
      });
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}

/**
 * Creating a PGlite cluster runs initdb inside WASM, which takes seconds. When
 * SLIPWAY_PGLITE_TEMPLATE names a data-directory tarball (from `dumpDataDir`), a new
 * data directory is unpacked from it instead. The test suite makes one template and
 * starts every embedded server from it; an existing data directory is never touched.
 */
function templateFor(dataDir: string): { loadDataDir?: Blob } {
  const template = process.env.SLIPWAY_PGLITE_TEMPLATE;
  if (!template || existsSync(join(dataDir, "PG_VERSION")) || !existsSync(template)) return {};
  return { loadDataDir: new Blob([readFileSync(template)]) };
}

/** Writes a fresh, empty cluster as a tarball usable as SLIPWAY_PGLITE_TEMPLATE. */
export async function writePgliteTemplate(path: string): Promise<void> {
  const { writeFileSync } = await import("node:fs");
  const pg = new PGlite();
  await pg.waitReady;
  const dump = await pg.dumpDataDir("none");
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
  await pg.close();
}
