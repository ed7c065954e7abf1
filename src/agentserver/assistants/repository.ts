import type { Queryable } from "../../storage/database.ts";
import type { SortField } from "./schemas.ts";
import { jsonbText } from "../../storage/jsonb-text.ts";
import { sqlParameters } from "../../storage/sql-parameters.ts";

/**
 * The SQL of assistants (tables `assistants` and `assistant_versions`, 0001_core.sql).
 * `assistants` holds the version in use; `assistant_versions` every version ever made.
 * Statements take the caller's clock so tests can pin time. config, context and metadata
 * are `json` columns, which keep the order of keys as written; filters cast them to jsonb
 * (migration 0025, decision 0031).
 */
export interface AssistantRow {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

export type VersionRow = Omit<AssistantRow, "updated_at">;

/** The fields of one version, as written to both tables. */
export type AssistantFields = Pick<AssistantRow, "graph_id" | "name" | "description" | "config" | "context" | "metadata">;

export interface AssistantFilter {
  metadata?: Record<string, unknown>;
  graphId?: string;
  name?: string;
}

const COLUMNS = "assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at";
const VERSION_COLUMNS = "assistant_id, graph_id, name, description, config, context, metadata, version, created_at";

const json = (value: unknown) => jsonbText(value ?? {});

/**
 * Inserts an assistant at version 1, or nothing when the id is taken: the row comes
 * back only when this call created it, which makes "create unless it exists" one
 * race-free statement.
 */
export async function insertAssistant(q: Queryable, id: string, fields: AssistantFields, now: Date): Promise<AssistantRow | undefined> {
  const rows = await q.query<AssistantRow>(
    `INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::json, $6::json, $7::json, 1, $8::timestamptz, $8::timestamptz)
     ON CONFLICT (assistant_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [id, fields.graph_id, fields.name, fields.description, json(fields.config), json(fields.context), json(fields.metadata), now.toISOString()],
  );
  return rows[0];
}

export async function insertVersion(q: Queryable, id: string, version: number, fields: AssistantFields, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
     VALUES ($1, $2, $3, $4, $5, $6::json, $7::json, $8::json, $9::timestamptz)
     ON CONFLICT (assistant_id, version) DO NOTHING`,
    [id, version, fields.graph_id, fields.name, fields.description, json(fields.config), json(fields.context), json(fields.metadata), now.toISOString()],
  );
}

/** One assistant; `forUpdate` locks its row until the transaction ends (patch, set latest). */
export async function findAssistant(q: Queryable, id: string, forUpdate = false): Promise<AssistantRow | undefined> {
  const rows = await q.query<AssistantRow>(`SELECT ${COLUMNS} FROM assistants WHERE assistant_id = $1${forUpdate ? " FOR UPDATE" : ""}`, [id]);
  return rows[0];
}

/** An assistant's metadata alone (custom auth matches its filters against it); `undefined`: no such assistant. */
export async function assistantMetadata(q: Queryable, id: string): Promise<Record<string, unknown> | undefined> {
  const rows = await q.query<{ metadata: Record<string, unknown> | null }>("SELECT metadata FROM assistants WHERE assistant_id = $1", [id]);
  return rows[0] ? (rows[0].metadata ?? {}) : undefined;
}

/** Makes `fields` the assistant's current version. */
export async function updateCurrent(q: Queryable, id: string, version: number, fields: AssistantFields, now: Date): Promise<AssistantRow> {
  const rows = await q.query<AssistantRow>(
    `UPDATE assistants SET graph_id = $2, name = $3, description = $4, config = $5::json, context = $6::json,
       metadata = $7::json, version = $8, updated_at = $9::timestamptz
     WHERE assistant_id = $1
     RETURNING ${COLUMNS}`,
    [id, fields.graph_id, fields.name, fields.description, json(fields.config), json(fields.context), json(fields.metadata), version, now.toISOString()],
  );
  return rows[0]!;
}

/** The highest version ever made: after "set latest" to an old one, the next patch goes above it. */
export async function maxVersion(q: Queryable, id: string): Promise<number> {
  const rows = await q.query<{ max: number | null }>("SELECT max(version) AS max FROM assistant_versions WHERE assistant_id = $1", [id]);
  return Number(rows[0]?.max ?? 0);
}

export async function findVersion(q: Queryable, id: string, version: number): Promise<VersionRow | undefined> {
  const rows = await q.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM assistant_versions WHERE assistant_id = $1 AND version = $2`, [id, version]);
  return rows[0];
}

/** Versions newest first, optionally only those whose metadata contains `metadata`. */
export async function listVersions(
  q: Queryable,
  id: string,
  options: { metadata?: Record<string, unknown>; limit: number; offset: number },
): Promise<VersionRow[]> {
  const p = sqlParameters();
  const where = [`assistant_id = ${p.add(id)}`];
  if (options.metadata) where.push(`metadata::jsonb @> ${p.add(json(options.metadata))}::jsonb`);
  return q.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM assistant_versions WHERE ${where.join(" AND ")}
     ORDER BY version DESC LIMIT ${p.add(options.limit)} OFFSET ${p.add(options.offset)}`,
    p.values,
  );
}

function whereClause(filter: AssistantFilter, add: (value: unknown) => string): string {
  const where: string[] = [];
  if (filter.metadata) where.push(`metadata::jsonb @> ${add(json(filter.metadata))}::jsonb`);
  if (filter.graphId !== undefined) where.push(`graph_id = ${add(filter.graphId)}`);
  // Substring match that takes the caller's text literally: %, _ and \ are escaped.
  if (filter.name !== undefined) where.push(`name ILIKE '%' || ${add(filter.name.replace(/[\\%_]/g, "\\$&"))}::text || '%' ESCAPE '\\'`);
  return where.length ? `WHERE ${where.join(" AND ")}` : "";
}

/** Column names are interpolated, so they come from this closed table only. */
const SORT_COLUMN: Record<SortField, string> = {
  assistant_id: "assistant_id",
  created_at: "created_at",
  updated_at: "updated_at",
  name: "name",
  graph_id: "graph_id",
};

/** A page of assistants and the number matching the filter (window count, one round trip). */
export async function searchAssistants(
  q: Queryable,
  filter: AssistantFilter,
  page: { sortBy: SortField; sortOrder: "asc" | "desc"; limit: number; offset: number },
): Promise<{ rows: AssistantRow[]; total: number }> {
  const p = sqlParameters();
  const where = whereClause(filter, p.add);
  const direction = page.sortOrder === "asc" ? "ASC" : "DESC";
  const rows = await q.query<AssistantRow & { total: number }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM assistants ${where}
     ORDER BY ${SORT_COLUMN[page.sortBy]} ${direction}, assistant_id ${direction}
     LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}`,
    p.values,
  );
  // Past the last page the window count is unavailable; count separately then.
  const total = rows.length ? Number(rows[0]!.total) : page.offset > 0 ? await countAssistants(q, filter) : 0;
  return { rows: rows.map(({ total: _total, ...row }) => row), total };
}

export async function countAssistants(q: Queryable, filter: AssistantFilter): Promise<number> {
  const p = sqlParameters();
  const rows = await q.query<{ count: number }>(`SELECT count(*) AS count FROM assistants ${whereClause(filter, p.add)}`, p.values);
  return Number(rows[0]?.count ?? 0);
}

/** Deletes an assistant (its versions go with it, ON DELETE CASCADE); true when it existed. */
export async function deleteAssistant(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query("DELETE FROM assistants WHERE assistant_id = $1 RETURNING assistant_id", [id]);
  return rows.length > 0;
}
