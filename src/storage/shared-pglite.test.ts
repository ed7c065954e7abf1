import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { openSharedPglite } from "./shared-pglite-client.ts";
import { startSharedPgliteHost, type SharedPgliteHost } from "./shared-pglite-host.ts";

/** One embedded database served to several clients, as a deployment's revisions share it. */
describe("shared embedded database", () => {
  let dir: string;
  let host: SharedPgliteHost;
  const opened: Database[] = [];
  const client = async () => {
    const db = await openSharedPglite(host.socketPath);
    opened.push(db);
    return db;
  };

  beforeEach(async () => {
    process.env.SLIPWAY_PGLITE_TEMPLATE ??= inject("pgliteTemplate");
    dir = mkdtempSync(join(tmpdir(), "slipway-shared-"));
    host = await startSharedPgliteHost({ dataDir: join(dir, "db"), schema: "deploy_x", socketPath: join(dir, "db.sock") });
  });
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close().catch(() => undefined);
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves queries and migrations to two clients, in the host's schema, with types intact", async () => {
    const a = await client();
    const b = await client();
    expect(a.shared).toBe(true);
    expect(a.schema).toBe("deploy_x");
    expect(await migrate(a, "agent")).not.toEqual([]);
    expect(await migrate(b, "agent")).toEqual([]);
    await a.query("CREATE TABLE probe (id int PRIMARY KEY, at timestamptz, blob bytea, doc jsonb)");
    const at = new Date("2026-01-02T03:04:05.678Z");
    await a.query("INSERT INTO probe VALUES (1, $1, $2, $3)", [at, new Uint8Array([1, 2, 255]), JSON.stringify({ k: [1, "x"] })]);
    const [row] = await b.query<{ at: Date; blob: Uint8Array; doc: unknown }>("SELECT at, blob, doc FROM probe");
    expect(row.at).toBeInstanceOf(Date);
    expect(row.at.toISOString()).toBe(at.toISOString());
    expect([...row.blob]).toEqual([1, 2, 255]);
    expect(row.doc).toEqual({ k: [1, "x"] });
    const [{ current_schema }] = await b.query<{ current_schema: string }>("SELECT current_schema()");
    expect(current_schema).toBe("deploy_x");
  });

  it("runs one client's transaction before another's statements, and keeps PostgreSQL's error fields", async () => {
    const a = await client();
    const b = await client();
    await a.query("CREATE TABLE probe (id int PRIMARY KEY)");
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const txn = a.transaction(async (tx) => {
      await tx.query("INSERT INTO probe VALUES (1)");
      order.push("a inserted");
      await held;
      order.push("a commits");
    });
    await new Promise((r) => setTimeout(r, 50));
    const read = b.query<{ n: number }>("SELECT count(*)::int AS n FROM probe").then((rows) => {
      order.push(`b read ${rows[0].n}`);
    });
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([txn, read]);
    expect(order).toEqual(["a inserted", "a commits", "b read 1"]);
    const error = await b.query("INSERT INTO probe VALUES (1)").catch((e) => e);
    expect(error.code).toBe("23505");
    expect(error.constraint).toBe("probe_pkey");
  });

  it("rolls back the open transaction of a client that goes away, and lets the others on", async () => {
    const a = await client();
    const b = await client();
    await a.query("CREATE TABLE probe (id int PRIMARY KEY)");
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const abandoned = a.transaction(async (tx) => {
      await tx.query("INSERT INTO probe VALUES (7)");
      inside();
      await new Promise(() => undefined);
    });
    abandoned.catch(() => undefined);
    await entered;
    await a.close();
    // Without the rollback this would wait for ever behind a's transaction.
    expect(await b.query("SELECT id FROM probe")).toEqual([]);
    await b.query("INSERT INTO probe VALUES (7)");
    expect(await b.query("SELECT id FROM probe")).toEqual([{ id: 7 }]);
  });

  it("tells its clients when the host stops: calls fail and onLost handlers run", async () => {
    const a = await client();
    const lost = new Promise<Error>((resolve) => a.onLost?.(resolve));
    await host.close();
    expect((await lost).message).toMatch(/closed its connection/);
    await expect(a.query("SELECT 1")).rejects.toThrow(/closed its connection/);
    host = await startSharedPgliteHost({ dataDir: join(dir, "db"), schema: "deploy_x", socketPath: join(dir, "db.sock") });
  });

  it("delivers NOTIFY to every listening client, on commit, and notify() to all of them", async () => {
    const a = await client();
    const b = await client();
    const heardA: string[] = [];
    const heardB: string[] = [];
    await a.listen("chan", (p) => heardA.push(p));
    await b.listen("chan", (p) => heardB.push(p));
    await a.transaction(async (tx) => {
      await tx.query("SELECT pg_notify('chan', 'from-sql')");
      await new Promise((r) => setTimeout(r, 50));
      expect(heardB).toEqual([]);
    });
    await b.notify("chan", "from-b");
    await new Promise((r) => setTimeout(r, 100));
    expect(heardA).toEqual(["from-sql", "from-b"]);
    expect(heardB).toEqual(["from-sql", "from-b"]);
  });

  it("refuses the socket to other users (mode 0600)", async () => {
    const { statSync } = await import("node:fs");
    if (process.platform === "win32") return;
    expect(statSync(host.socketPath).mode & 0o777).toBe(0o600);
  });
});
