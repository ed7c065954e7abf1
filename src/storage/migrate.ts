import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Database } from "./database.ts";

export type Component = "agent" | "control";

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

/**
 * Applies the component's numbered migrations (`migrations/<component>/NNNN_name.sql`)
 * that this schema has not seen yet, all in one transaction. A transaction-scoped
 * advisory lock keyed on the schema makes concurrent migrators (two processes
 * starting at once on one server) wait for each other instead of racing.
 */
export async function migrate(db: Database, component: Component): Promise<number[]> {
  const folder = fileURLToPath(new URL(`./migrations/${component}/`, import.meta.url));
  const files = readdirSync(folder)
    .filter((name) => MIGRATION_FILE.test(name))
    .sort();
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`slipway-migrate:${db.schema}`]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = new Set((await tx.query<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version));
    const done: number[] = [];
    for (const name of files) {
      const version = Number(MIGRATION_FILE.exec(name)![1]);
      if (applied.has(version)) continue;
      const sql = readFileSync(folder + name, "utf8");
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [version, name]);
      done.push(version);
    }
    return done;
  });
}

/**
 * Splits a migration into statements on semicolons at line ends; `$$` bodies are kept
 * whole. Extended-protocol queries accept one statement each, on both drivers.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let inDollar = false;
  for (const line of sql.split("\n")) {
    if (line.trim().startsWith("--") && !inDollar) continue;
    current += `${line}\n`;
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inDollar = !inDollar;
    if (!inDollar && line.trimEnd().endsWith(";")) {
      statements.push(current.trim());
      current = "";
    }
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}
