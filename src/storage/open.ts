import type { Database, DatabaseOptions } from "./database.ts";
import { migrate, type Component } from "./migrate.ts";

/**
 * Opens the configured store and brings `component`'s schema up to date. Each back end's
 * client is loaded when chosen: an agent process on the control plane's socket never
 * loads `pg` nor PGlite (decision 0053), an embedded control plane never loads `pg`
 * (decision 0054).
 */
export async function openDatabase(options: DatabaseOptions & { component: Component }): Promise<Database> {
  const db = options.storageSocket
    ? await (await import("./shared-pglite-client.ts")).openSharedPglite(options.storageSocket)
    : options.databaseUrl
      ? await (await import("./postgres.ts")).openPostgres(options.databaseUrl, options.schema, options.poolSize)
      : await (await import("./pglite.ts")).openPglite(options.dataDir ?? ".slipway", options.schema, { template: options.pgliteTemplate });
  try {
    await migrate(db, options.component);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
