import type { Queryable } from "../../storage/database.ts";
import { compileFilter } from "./filter.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import { splitNamespace } from "./namespace.ts";
import { sqlParameters } from "../../storage/sql-parameters.ts";

/**
 * The SQL of the store (table `store_items`, 0003_store.sql). Namespaces arrive
 * already joined (`a.b`); every read takes the caller's clock so that expired
 * rows are invisible from the instant they expire, whatever the sweeper did.
 */
interface StoredItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  /** Semantic search only: the best cosine similarity of the item's vectors; null without vectors. */
  score?: number | null;
}

interface ItemRow {
  namespace_path: string;
  key: string;
  value: Record<string, unknown>;
  created_at: Date | string;
  updated_at: Date | string;
  score?: number | string | null;
}

const ITEM_COLUMNS = "namespace_path, key, value, created_at, updated_at";
const LIVE = (now: string) => `(expires_at IS NULL OR expires_at > ${now}::timestamptz)`;

/** The rows at `path` or below it; see the comment on the column for the range. */
function underPrefix(path: string, add: (value: unknown) => string): string {
  const p = add(path);
  return `(namespace_path = ${p}::text OR (namespace_path >= ${p}::text || '.' AND namespace_path < ${p}::text || '/'))`;
}

/**
 * Reading an item that has a ttl pushes its expiry out again. The refresh rides
 * in the same statement as the read (a data-modifying CTE), so a read is one
 * round trip whether or not it refreshes.
 */
function refreshing(now: string): string {
  return `, touched AS (
    UPDATE store_items s SET expires_at = ${now}::timestamptz + s.ttl_minutes * interval '1 minute'
    FROM hits h WHERE s.namespace_path = h.namespace_path AND s.key = h.key AND s.ttl_minutes IS NOT NULL
  )`;
}

export async function getItem(db: Queryable, path: string, key: string, now: Date, refresh: boolean): Promise<StoredItem | null> {
  const { values, add } = sqlParameters();
  const at = add(now);
  const sql = `WITH hits AS (
      SELECT ${ITEM_COLUMNS} FROM store_items
      WHERE namespace_path = ${add(path)} AND key = ${add(key)} AND ${LIVE(at)}
    )${refresh ? refreshing(at) : ""}
    SELECT * FROM hits`;
  const rows = await db.query<ItemRow>(sql, values);
  return rows.length ? toItem(rows[0]) : null;
}

export async function putItem(
  db: Queryable,
  item: { path: string; key: string; value: Record<string, unknown>; ttlMinutes: number | null },
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO store_items AS s (namespace_path, key, value, created_at, updated_at, ttl_minutes, expires_at)
     VALUES ($1, $2, $3::json, $4::timestamptz, $4::timestamptz, $5::double precision,
             $4::timestamptz + $5::double precision * interval '1 minute')
     ON CONFLICT (namespace_path, key) DO UPDATE SET
       value = excluded.value,
       -- An expired row the sweeper has not removed yet is gone for readers: writing it starts a new item.
       created_at = CASE WHEN s.expires_at <= excluded.updated_at THEN excluded.created_at ELSE s.created_at END,
       updated_at = excluded.updated_at,
       ttl_minutes = excluded.ttl_minutes,
       expires_at = excluded.expires_at`,
    [item.path, item.key, jsonbText(item.value), now, item.ttlMinutes],
  );
}

export async function deleteItem(db: Queryable, path: string, key: string): Promise<void> {
  await db.query("DELETE FROM store_items WHERE namespace_path = $1 AND key = $2", [path, key]);
}

interface SearchQuery {
  /** Joined prefix; "" searches everything. */
  prefix: string;
  filter?: unknown;
  limit: number;
  offset: number;
  refresh: boolean;
  /** Semantic search: rank by similarity to this vector (items without vectors come last). */
  semantic?: { vector: number[]; dims: number; support: VectorSupport };
  /** Extra conditions on the rows (custom auth's filters), built with the same `add`. */
  conditions?: (add: (value: unknown) => string) => string[];
}

/**
 * Listing mode: newest update first; namespace and key break ties so pages are stable.
 * Semantic mode: best similarity first, then as in listing mode.
 */
export async function searchItems(db: Queryable, query: SearchQuery, now: Date): Promise<StoredItem[]> {
  if (query.semantic) return searchBySimilarity(db, query, query.semantic, now);
  const { values, add } = sqlParameters();
  const at = add(now);
  const where = [LIVE(at), ...compileFilter(query.filter, add), ...(query.conditions?.(add) ?? [])];
  if (query.prefix !== "") where.push(underPrefix(query.prefix, add));
  const order = "ORDER BY updated_at DESC, namespace_path, key";
  const sql = `WITH hits AS (
      SELECT ${ITEM_COLUMNS} FROM store_items WHERE ${where.join(" AND ")}
      ${order} LIMIT ${add(query.limit)}::bigint OFFSET ${add(query.offset)}::bigint
    )${query.refresh ? refreshing(at) : ""}
    SELECT * FROM hits ${order}`;
  return (await db.query<ItemRow>(sql, values)).map(toItem);
}

/**
 * Each item scores its best field (the max over its vectors), as LangGraph's stores do.
 * The scan is exact: every vector under the prefix is compared, which is what the
 * embedded database can do; vectors of another dimension (the config changed) are skipped.
 */
async function searchBySimilarity(db: Queryable, query: SearchQuery, semantic: NonNullable<SearchQuery["semantic"]>, now: Date): Promise<StoredItem[]> {
  const { values, add } = sqlParameters();
  const at = add(now);
  const q = add(`{${semantic.vector.join(",")}}`);
  const similarity = similarityExpression(semantic.support, q, add(norm(semantic.vector)));
  const vectorWhere = [`cardinality(v.embedding) = ${add(semantic.dims)}::int`];
  const where = [LIVE(at), ...compileFilter(query.filter, add), ...(query.conditions?.(add) ?? [])];
  if (query.prefix !== "") {
    vectorWhere.push(underPrefix(query.prefix, add));
    where.push(underPrefix(query.prefix, add));
  }
  const order = "ORDER BY score DESC NULLS LAST, updated_at DESC, namespace_path, key";
  const sql = `WITH scored AS (
      SELECT namespace_path, key, max(${similarity}) AS score FROM store_vectors v
      WHERE ${vectorWhere.join(" AND ")} GROUP BY namespace_path, key
    ), hits AS (
      SELECT ${ITEM_COLUMNS}, scored.score FROM store_items LEFT JOIN scored USING (namespace_path, key)
      WHERE ${where.join(" AND ")}
      ${order} LIMIT ${add(query.limit)}::bigint OFFSET ${add(query.offset)}::bigint
    )${query.refresh ? refreshing(at) : ""}
    SELECT * FROM hits ${order}`;
  return (await db.query<ItemRow>(sql, values)).map(toItem);
}

export interface NamespaceQuery {
  /** Labels, "*" matching any one label. */
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
  /** Extra conditions on the rows (custom auth's filters), built with the same `add`. */
  conditions?: (add: (value: unknown) => string) => string[];
}

/**
 * Distinct namespaces of live items, matched on their full path and then cut to
 * `maxDepth` labels, in byte order. Labels are compared one by one so that "*"
 * can stand for any label; the literal head of the prefix also narrows the scan
 * through the primary key.
 */
export async function listNamespaces(db: Queryable, query: NamespaceQuery, now: Date): Promise<string[][]> {
  const { values, add } = sqlParameters();
  const inner = [LIVE(add(now)), ...(query.conditions?.(add) ?? [])];
  const outer: string[] = [];
  const prefix = query.prefix ?? [];
  const head = prefix.slice(0, prefix.includes("*") ? prefix.indexOf("*") : prefix.length);
  if (head.length) inner.push(underPrefix(head.join("."), add));
  if (prefix.length) {
    outer.push(`cardinality(labels) >= ${prefix.length}`);
    prefix.forEach((label, i) => {
      if (label !== "*") outer.push(`labels[${i + 1}] = ${add(label)}::text`);
    });
  }
  const suffix = query.suffix ?? [];
  if (suffix.length) {
    outer.push(`cardinality(labels) >= ${suffix.length}`);
    suffix.forEach((label, i) => {
      if (label !== "*") outer.push(`labels[cardinality(labels) - ${suffix.length - 1 - i}] = ${add(label)}::text`);
    });
  }
  const path = query.maxDepth === undefined ? "namespace_path" : `array_to_string(labels[1:${add(query.maxDepth)}::int], '.')`;
  const sql = `SELECT DISTINCT ${path} COLLATE "C" AS path FROM (
      SELECT namespace_path, string_to_array(namespace_path, '.') AS labels FROM store_items WHERE ${inner.join(" AND ")}
    ) n
    ${outer.length ? `WHERE ${outer.join(" AND ")}` : ""}
    ORDER BY path LIMIT ${add(query.limit)}::bigint OFFSET ${add(query.offset)}::bigint`;
  return (await db.query<{ path: string }>(sql, values)).map((row) => splitNamespace(row.path));
}

/** Deletes the rows that expired at or before `now`; returns how many. */
export async function deleteExpired(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query<{ n: number }>(
    "WITH gone AS (DELETE FROM store_items WHERE expires_at <= $1::timestamptz RETURNING 1) SELECT count(*)::int AS n FROM gone",
    [now],
  );
  return rows[0]?.n ?? 0;
}

function toItem(row: ItemRow): StoredItem {
  return {
    namespace: splitNamespace(row.namespace_path),
    key: row.key,
    value: row.value,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    ...(row.score === undefined ? {} : { score: row.score === null ? null : Number(row.score) }),
  };
}

/*
 * Semantic search's vectors (table `store_vectors`, 0014_store_vectors.sql). Scores are
 * cosine similarities, computed in the database next to the rows they rank: with
 * pgvector's `<=>` where the server has the extension, otherwise with a dot product over
 * the arrays (PGlite ships no pgvector; neither do many PostgreSQL servers).
 */

/** How the database computes similarity: pgvector's operator (its schema named), or plain SQL. */
export type VectorSupport = { kind: "pgvector"; schema: string } | { kind: "sql" };

/**
 * pgvector when it is installed in this database already, or can be installed here.
 * Its schema is looked up rather than assumed: deployments sharing a server share one
 * installation, wherever the first of them made it.
 */
export async function detectVectorSupport(db: Queryable): Promise<VectorSupport> {
  const installed = async () =>
    (
      await db.query<{ schema: string }>(
        "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
      )
    )[0];
  let found = await installed();
  if (!found) {
    const available = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (available.length === 0) return { kind: "sql" };
    try {
      await db.query("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public");
    } catch {
      // No right to install it: the plain SQL scores the same, only slower.
      return { kind: "sql" };
    }
    found = await installed();
  }
  return found ? { kind: "pgvector", schema: found.schema } : { kind: "sql" };
}

/** An expression for the similarity of column `embedding` (alias `v`) to the query vector placeholder `q`. */
function similarityExpression(support: VectorSupport, q: string, qNorm: string): string {
  if (support.kind === "pgvector") {
    const s = `"${support.schema.replaceAll('"', '""')}"`;
    return `(1 - (v.embedding::${s}.vector OPERATOR(${s}.<=>) ${q}::real[]::${s}.vector))`;
  }
  return `(CASE WHEN v.norm = 0 OR ${qNorm}::float8 = 0 THEN 0
    ELSE (SELECT sum(a::float8 * b::float8) FROM unnest(v.embedding, ${q}::real[]) AS t(a, b)) / (v.norm * ${qNorm}::float8) END)`;
}

export interface FieldVector {
  field: string;
  vector: number[];
}

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
}

/**
 * The vectors an item's put leaves behind: exactly `vectors` (none when the put indexes
 * nothing). Called in the put's transaction, after the item row is written.
 */
export async function replaceVectors(db: Queryable, path: string, key: string, vectors: FieldVector[]): Promise<void> {
  const fields = vectors.map((v) => v.field);
  await db.query("DELETE FROM store_vectors WHERE namespace_path = $1 AND key = $2 AND NOT (field_name = ANY($3::text[]))", [path, key, fields]);
  if (vectors.length === 0) return;
  await db.query(
    `INSERT INTO store_vectors (namespace_path, key, field_name, embedding, norm)
     SELECT $1, $2, f.field, ARRAY(SELECT jsonb_array_elements_text(f.vector)::real), f.norm
     FROM jsonb_to_recordset($3::jsonb) AS f(field text, vector jsonb, norm float8)
     ON CONFLICT (namespace_path, key, field_name) DO UPDATE SET embedding = excluded.embedding, norm = excluded.norm`,
    [path, key, JSON.stringify(vectors.map((v) => ({ field: v.field, vector: v.vector, norm: norm(v.vector) })))],
  );
}
