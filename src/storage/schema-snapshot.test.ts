import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { migrate, type Component } from "./migrate.ts";
import { openPglite } from "./pglite.ts";
import { openPostgres } from "./postgres.ts";
import { schemaSnapshot, snapshotFile } from "./schema-snapshot.ts";

/**
 * The checked-in schema snapshots (migrations/<component>.schema.sql, decision 0048) are
 * what the migrations build from an empty schema, on both back ends: a migration added or
 * changed without `npm run db:snapshot` fails here, naming the lines that differ.
 */
const COMPONENTS: Component[] = ["agent", "control"];

describe.each(BACKENDS)("schema snapshots (%s)", (backend) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it.each(COMPONENTS)(
    "the %s migrations build the checked-in snapshot",
    async (component) => {
      const target = freshBackend(backend, "snap");
      db = target.databaseUrl ? await openPostgres(target.databaseUrl, target.schema, 1) : await openPglite(target.dataDir!, target.schema);
      await migrate(db, component);
      const built = await schemaSnapshot(db, target.schema, component);
      if (target.databaseUrl) await db.query(`DROP SCHEMA ${target.schema} CASCADE`);
      const file = snapshotFile(component);
      const checkedIn = readFileSync(file, "utf8");
      expect(built === checkedIn, firstDifference(checkedIn, built, file)).toBe(true);
    },
    60_000,
  );
});

/**
 * The lines that differ (a longest-common-subsequence diff, on the failure path only),
 * numbered as in the checked-in file, at most 40 of them.
 */
function firstDifference(expected: string, actual: string, file: string): string {
  const want = expected.split("\n");
  const got = actual.split("\n");
  // common[i][j]: length of the longest common subsequence of want[i..] and got[j..].
  const common = Array.from({ length: want.length + 1 }, () => new Int32Array(got.length + 1));
  for (let i = want.length - 1; i >= 0; i--) {
    for (let j = got.length - 1; j >= 0; j--) {
      common[i]![j] = want[i] === got[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < want.length || j < got.length) {
    if (i < want.length && j < got.length && want[i] === got[j]) {
      i++;
      j++;
    } else if (j < got.length && (i === want.length || common[i]![j + 1]! >= common[i + 1]![j]!)) lines.push(`+ ${i + 1}: ${got[j++]}`);
    else lines.push(`- ${i + 1}: ${want[i++]}`);
  }
  return [
    `${file} is not what the migrations build ("-" only in the file, "+" only in the migrated schema).`,
    "Regenerate it with `npm run db:snapshot` and commit it.",
    ...lines.slice(0, 40),
    ...(lines.length > 40 ? [`... ${lines.length - 40} more lines differ`] : []),
  ].join("\n");
}
