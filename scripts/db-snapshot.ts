/**
 * Regenerates the schema snapshots checked in beside the migrations
 * (src/storage/migrations/<component>.schema.sql, decision 0048): migrates an empty
 * in-memory embedded database and writes out what the catalogs then hold.
 * src/storage/schema-snapshot.test.ts fails until this has been run after a new migration.
 *
 *   npm run db:snapshot
 */
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { migrate, type Component } from "../src/storage/migrate.ts";
import { openPglite } from "../src/storage/pglite.ts";
import { schemaSnapshot, snapshotFile } from "../src/storage/schema-snapshot.ts";

const SCHEMA = "snapshot";

for (const component of ["agent", "control"] satisfies Component[]) {
  const db = await openPglite("memory://", SCHEMA, { upkeepEveryMs: 0 });
  try {
    await migrate(db, component);
    const file = snapshotFile(component);
    writeFileSync(file, await schemaSnapshot(db, SCHEMA, component));
    console.log(`wrote ${relative(process.cwd(), file)}`);
  } finally {
    await db.close();
  }
}
