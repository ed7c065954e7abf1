import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, freshBackend } from "../../test/support/backends.ts";
import { byteaArrayText, parseByteaArrayText, parseByteaText } from "./bytea-text.mjs";
import type { Database } from "./database.ts";
import { openDatabase } from "./open.ts";

const every = Uint8Array.from({ length: 256 }, (_, i) => i);
const big = new Uint8Array(50_000).map((_, i) => (i * 31) % 256);
const values = [every, new Uint8Array(0), null, big];

describe("bytea text codec", () => {
  it("reads and writes the hex format", () => {
    expect(parseByteaText("\\x00ff10")).toEqual(Uint8Array.from([0, 255, 16]));
    expect(byteaArrayText([Uint8Array.from([1, 2]), null])).toBe('{"\\\\x0102",NULL}');
    expect(parseByteaArrayText('{"\\\\x0102",NULL,"\\\\x"}')).toEqual([Uint8Array.from([1, 2]), null, new Uint8Array(0)]);
    expect(parseByteaArrayText("{}")).toEqual([]);
  });

  it("declines what it does not expect, for the driver's own codec", () => {
    expect(parseByteaText("\\001abc")).toBeUndefined(); // escape format
    expect(parseByteaArrayText('{{"\\\\x01"}}')).toBeUndefined(); // two dimensions
    expect(parseByteaArrayText('{"\\\\001"}')).toBeUndefined();
    expect(byteaArrayText(["text"])).toBeUndefined();
  });
});

describe.each(BACKENDS)("bytea through the driver on %s", (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ ...freshBackend(backend), component: "agent" });
  });
  afterAll(() => db?.close());

  const bytesOf = (value: unknown) => (value == null ? value : [...(value as Uint8Array)]);

  it("keeps every byte of bytea and bytea[] both ways", async () => {
    const [row] = await db.query<{ one: Uint8Array; many: Array<Uint8Array | null>; hex: string[] }>(
      "SELECT $1::bytea AS one, $2::bytea[] AS many, ARRAY(SELECT encode(b, 'hex') FROM unnest($2::bytea[]) b) AS hex",
      [every, values],
    );
    expect(bytesOf(row.one)).toEqual([...every]);
    expect(row.many.map(bytesOf)).toEqual(values.map(bytesOf));
    // What the server stored, in its own hex: the parameter went in unchanged too.
    expect(row.hex).toEqual(values.map((v) => (v ? Buffer.from(v).toString("hex") : null)));
  });
});

// PGlite's own parser reads only the hex format, so the fallback is tried where the driver can read the other.
describe("bytea through node-postgres", () => {
  it("still reads the escape format, through the driver's own parser", async () => {
    const db = await openDatabase({ ...freshBackend("postgres"), component: "agent" });
    try {
      const rows = await db.transaction(async (tx) => {
        await tx.query("SET LOCAL bytea_output = 'escape'");
        return tx.query<{ one: Uint8Array; many: Array<Uint8Array | null> }>("SELECT $1::bytea AS one, $2::bytea[] AS many", [every, [every, null]]);
      });
      expect([...rows[0].one]).toEqual([...every]);
      expect(rows[0].many.map((v) => (v ? [...v] : v))).toEqual([[...every], null]);
    } finally {
      await db.close();
    }
  });
});

describe("node-postgres outside our connections", () => {
  it("keeps the driver's own parsers for other users of pg in the process (a graph's code)", async () => {
    const target = freshBackend("postgres");
    const ours = await openDatabase({ ...target, component: "agent" });
    const theirs = new pg.Client({ connectionString: target.databaseUrl });
    await theirs.connect();
    try {
      const sql = "SELECT 7::int8 AS big, ARRAY['\\x0102'::bytea] AS blobs";
      const [mine] = await ours.query<{ big: unknown; blobs: unknown[] }>(sql);
      const [other] = (await theirs.query(sql)).rows as Array<{ big: unknown; blobs: unknown[] }>;
      expect(mine.big).toBe(7);
      expect(other.big).toBe("7");
      expect(Buffer.isBuffer(other.blobs[0])).toBe(true);
      expect([...(mine.blobs[0] as Uint8Array)]).toEqual([1, 2]);
    } finally {
      await theirs.end();
      await ours.close();
    }
  });
});
