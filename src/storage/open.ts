import type { Database, DatabaseOptions } from "./database.ts";
import { migrate, type Component } from "./migrate.ts";
import { openPglite } from "./pglite.ts";
import { openPostgres } from "./postgres.ts";
import { openSharedPglite } from "./shared-pglite-client.ts";

/** Opens the configured store and brings `component`'s schema up to date. */
export async function openDatabase(options: DatabaseOptions & { component: Component }): Promise<Database> {
  const db = options.storageSocket
    ? await openSharedPglite(options.storageSocket)
    : options.databaseUrl
      ? await openPostgres(options.databaseUrl, options.schema, options.poolSize)
      : await openPglite(options.dataDir ?? ".slipway", options.schema);
  try {
    await migrate(db, options.component);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
