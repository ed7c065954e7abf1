import type { Queryable } from "../../storage/database.ts";

/**
 * The SQL of semantic search (table `store_vectors`, 0014_store_vectors.sql). Scores are
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
    (await db.query<{ schema: string }>(
      "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
    ))[0];
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
export function similarityExpression(support: VectorSupport, q: string, qNorm: string): string {
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

export function norm(vector: number[]): number {
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
