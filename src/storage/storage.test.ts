import { afterEach, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { migrate, splitStatements } from "./migrate.ts";
import { openDatabase } from "./open.ts";

describe.each(BACKENDS)("storage on %s", (backend) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it("applies migrations once and records them", async () => {
    const target = freshBackend(backend);
    db = await openDatabase({ ...target, component: "agent" });
    const versions = await db.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
    expect(versions.length).toBeGreaterThan(0);
    expect(await migrate(db, "agent")).toEqual([]);
  });

  it("rolls back a failed transaction", async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    await db.query("CREATE TABLE probe (id int primary key)");
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO probe VALUES (1)");
        await tx.query("INSERT INTO probe VALUES (1)");
      }),
    ).rejects.toThrow();
    expect(await db.query("SELECT * FROM probe")).toEqual([]);
  });

  it("delivers notifications to listeners", async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
    const received = new Promise<string>((resolve) => void db!.listen("probe_channel", resolve));
    await new Promise((r) => setTimeout(r, 50));
    await db.notify("probe_channel", "hello");
    expect(await received).toBe("hello");
  });
});

describe("splitStatements", () => {
  it("keeps dollar-quoted bodies whole", () => {
    const sql = "CREATE TABLE a (x int);\nCREATE FUNCTION f() RETURNS int AS $$\nBEGIN\n  RETURN 1;\nEND;\n$$ LANGUAGE plpgsql;\n";
    expect(splitStatements(sql)).toHaveLength(2);
  });
});
