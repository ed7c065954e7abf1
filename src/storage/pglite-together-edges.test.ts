import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshBackend } from "../../test/support/backends.ts";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

/**
 * Edges of statements sent together to the embedded database (pglite.ts outbox,
 * pglite-thread.mjs runTogether, PreparedStatements.queryMany): what one caller sends
 * must not cost another caller its answer, and the cache of prepared statements must
 * not keep a statement it has closed.
 */
describe("statements sent together to the embedded database, at the edges", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
  });
  afterAll(() => db?.close());

  it("fails only the statement whose parameter cannot be written, not the others sent with it", async () => {
    const json = "SELECT $1::jsonb AS j";
    const one = "SELECT $1::int AS one";
    await db.query(json, ["{}"]); // both prepared from here on
    await db.query(one, [0]);
    // Crosses to the thread (a cycle clones), but JSON cannot write it.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const settled = await Promise.allSettled([db.query(one, [1]), db.query(json, [circular]), db.query(one, [2])]);
    expect(settled[0]).toEqual({ status: "fulfilled", value: [{ one: 1 }] });
    expect(settled[1].status).toBe("rejected");
    expect(settled[2]).toEqual({ status: "fulfilled", value: [{ one: 2 }] });
  });

  it("rejects a statement whose parameters cannot cross to the database thread, and answers the others", { timeout: 15_000 }, async () => {
    const settled = await Promise.allSettled([db.query("SELECT 1 AS one"), db.query("SELECT $1::text AS t", [() => "no"]), db.query("SELECT 2 AS two")]);
    expect(settled[0]).toEqual({ status: "fulfilled", value: [{ one: 1 }] });
    expect(settled[1]).toMatchObject({ status: "rejected", reason: { name: "DataCloneError" } });
    expect(settled[2]).toEqual({ status: "fulfilled", value: [{ two: 2 }] });
  });

  it("runs a statement sent after a batch after that whole batch, even when one statement of the batch fails", async () => {
    await db.query("CREATE TABLE order_probe (id int PRIMARY KEY)");
    const insert = "INSERT INTO order_probe (id) VALUES ($1) RETURNING id";
    const select = "SELECT id FROM order_probe WHERE id = $1";
    await db.query(insert, [1]); // both prepared from here on
    await db.query(select, [0]);
    let first: Promise<unknown> | undefined;
    let later: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      // Sent together, they wait as one batch behind this transaction...
      first = Promise.allSettled([db.query(insert, [1]), db.query(insert, [2])]);
      await tx.query("SELECT 1");
      // ...and this one, sent after them, waits behind them.
      later = db.query(select, [2]);
      await tx.query("SELECT 1");
    });
    await first;
    // Before the batch: PGlite's lock is first come, first served.
    expect(await later).toEqual([{ id: 2 }]);
  });

  it("answers statements of a batch whose prepared form changed shape or is gone", async () => {
    await db.query("CREATE TABLE stale_probe (a int)");
    await db.query("INSERT INTO stale_probe VALUES (1)");
    const star = "SELECT * FROM stale_probe WHERE a = $1";
    const count = "SELECT count(*)::int AS n FROM stale_probe WHERE a >= $1";
    await db.query(star, [1]); // both prepared from here on
    await db.query(count, [0]);
    await db.query("ALTER TABLE stale_probe ADD COLUMN b text DEFAULT 'x'");
    expect(await Promise.all([db.query(star, [1]), db.query(count, [0])])).toEqual([[{ a: 1, b: "x" }], [{ n: 1 }]]);
    await db.query("DEALLOCATE ALL"); // every prepared statement gone
    expect(await Promise.all([db.query(star, [1]), db.query(count, [0]), db.query(star, [2])])).toEqual([[{ a: 1, b: "x" }], [{ n: 1 }], []]);
    expect(await Promise.all([db.query(star, [1]), db.query(count, [0])])).toEqual([[{ a: 1, b: "x" }], [{ n: 1 }]]);
  });

  it("delivers each NOTIFY of a batch once, also when another statement of the batch fails", async () => {
    await db.query("CREATE TABLE notify_probe (id int PRIMARY KEY)");
    const insert = "INSERT INTO notify_probe (id) VALUES ($1) RETURNING id";
    const notify = "SELECT pg_notify($1, $2)";
    await db.query(insert, [1]); // both prepared from here on
    await db.query(notify, ["other_channel", "x"]);
    const heard: string[] = [];
    await db.listen("batch_probe", (payload) => void heard.push(payload));
    const settled = await Promise.allSettled([db.query(notify, ["batch_probe", "a"]), db.query(insert, [1]), db.query(notify, ["batch_probe", "b"])]);
    expect(settled.map((one) => one.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // Delivered in order: once this one is heard, the batch's were.
    await new Promise<void>((resolve) => {
      void db.listen("batch_probe", (payload) => payload === "end" && resolve());
      void db.query(notify, ["batch_probe", "end"]);
    });
    expect(heard).toEqual(["a", "b", "end"]);
  });
});

describe("the cache of prepared statements, while a batch waits", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
  });
  afterAll(() => db?.close());

  it("does not take back a statement it gave up (and closed) while a batch using it waited", async () => {
    const filler = (n: number) => `SELECT ${n} + $1::int AS v`;
    const kept = "SELECT $1::int AS kept";
    // The cache holds 500: after these, `kept` is its least recently used statement.
    for (let n = 0; n < 500; n++) await db.query(filler(n), [0]);
    await db.query(kept, [0]);
    for (let n = 500; n < 999; n++) await db.query(filler(n), [0]);
    let batch: Promise<unknown> | undefined;
    let fresh: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      batch = Promise.all([db.query(kept, [1]), db.query(filler(998), [1])]);
      await tx.query("SELECT 1"); // the batch waits behind this transaction
      fresh = db.query("SELECT $1::int AS fresh", [2]); // prepared: gives up `kept`
      await tx.query("SELECT 1");
    });
    expect(await batch).toEqual([[{ kept: 1 }], [{ v: 999 }]]);
    expect(await fresh).toEqual([{ fresh: 2 }]);
    // Inside a transaction a statement the cache holds is used as prepared.
    expect(await db.transaction((tx) => tx.query(kept, [3]))).toEqual([{ kept: 3 }]);
  });
});

describe("closing the embedded database while a batch is on its way", () => {
  it("answers the batch before it closes, and rejects what comes after", async () => {
    const db = await openDatabase({ ...freshBackend("pglite"), component: "agent" });
    const one = "SELECT $1::int AS one";
    await db.query(one, [0]); // prepared from here on
    const sent = Promise.allSettled([db.query(one, [1]), db.query(one, [2])]);
    const closed = db.close();
    const after = db.query(one, [3]).then(
      () => "answered",
      (error: Error) => error.message,
    );
    expect(await sent).toEqual([
      { status: "fulfilled", value: [{ one: 1 }] },
      { status: "fulfilled", value: [{ one: 2 }] },
    ]);
    await closed;
    expect(await after).toMatch(/closed|closing|stopped/);
  });
});
