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

  it.each(COMPONENTS)("the %s migrations build the checked-in snapshot", async (component) => {
    const target = freshBackend(backend, "snap");
    db = target.databaseUrl ? await openPostgres(target.databaseUrl, target.schema, 1) : await openPglite(target.dataDir!, target.schema);
    await migrate(db, component);
    const built = await schemaSnapshot(db, target.schema, component);
    if (target.databaseUrl) await db.query(`DROP SCHEMA ${target.schema} CASCADE`);
    const file = snapshotFile(component);
    const checkedIn = readFileSync(file, "utf8");
    expect(built === checkedIn, firstDifference(checkedIn, built, file)).toBe(true);
  }, 60_000);
});

/** The first stretch of lines where the two texts part, as a short unified diff. */
function firstDifference(expected: string, actual: string, file: string): string {
  const want = expected.split("\n");
  const got = actual.split("\n");
  let start = 0;
  while (start < want.length && start < got.length && want[start] === got[start]) start++;
  let endWant = want.length;
  let endGot = got.length;
  while (endWant > start && endGot > start && want[endWant - 1] === got[endGot - 1]) endWant--, endGot--;
  const shown = (lines: string[], from: number, to: number, mark: string) =>
    lines.slice(from, Math.min(to, from + 20)).map((line) => `${mark} ${line}`).concat(to - from > 20 ? [`${mark} ... (${to - from - 20} more)`] : []);
  return [
    `${file} is not what the migrations build (from line ${start + 1}). Regenerate it with \`npm run db:snapshot\` and commit it.`,
    ...shown(want, start, endWant, "- snapshot:"),
    ...shown(got, start, endGot, "+ migrated:"),
  ].join("\n");
}
