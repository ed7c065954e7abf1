import type { Queryable } from "../../storage/database.ts";
import type { Plan } from "../context.ts";

/** SQL for organizations, workspaces and API keys. No policy here: see service.ts. */

interface OrganizationRow {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
}

interface WorkspaceRow {
  id: string;
  organization_id: string;
  name: string;
  plan: Plan;
  created_at: Date;
}

interface ApiKeyRow {
  id: string;
  lookup_id: string;
  key_hash: string;
  organization_id: string;
  workspace_id: string | null;
  description: string;
  created_at: Date;
  revoked_at: Date | null;
  plan: Plan;
}

export async function insertOrganization(q: Queryable, row: { id: string; name: string; plan: Plan; now: Date }): Promise<void> {
  await q.query("INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)", [row.id, row.name, row.plan, row.now]);
}

export async function insertWorkspace(q: Queryable, row: { id: string; organizationId: string; name: string; now: Date }): Promise<void> {
  await q.query("INSERT INTO workspaces (id, organization_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)", [
    row.id,
    row.organizationId,
    row.name,
    row.now,
  ]);
}

export async function insertApiKey(
  q: Queryable,
  row: { id: string; lookupId: string; hash: string; organizationId: string; workspaceId: string | null; description: string; now: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO api_keys (id, lookup_id, key_hash, organization_id, workspace_id, description, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [row.id, row.lookupId, row.hash, row.organizationId, row.workspaceId, row.description, row.now],
  );
}

export async function findOrganization(q: Queryable, id: string): Promise<OrganizationRow | undefined> {
  const rows = await q.query<OrganizationRow>("SELECT id, name, plan, created_at FROM organizations WHERE id = $1", [id]);
  return rows[0];
}

export async function countOrganizations(q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM organizations");
  return rows[0].n;
}

/** The workspace with its organization's plan (what the auth hook needs in one query). */
export async function findWorkspace(q: Queryable, id: string): Promise<WorkspaceRow | undefined> {
  const rows = await q.query<WorkspaceRow>(
    `SELECT w.id, w.organization_id, w.name, o.plan, w.created_at
       FROM workspaces w JOIN organizations o ON o.id = w.organization_id
      WHERE w.id = $1`,
    [id],
  );
  return rows[0];
}

export async function listWorkspaces(q: Queryable, organizationId: string): Promise<WorkspaceRow[]> {
  return q.query<WorkspaceRow>(
    `SELECT w.id, w.organization_id, w.name, o.plan, w.created_at
       FROM workspaces w JOIN organizations o ON o.id = w.organization_id
      WHERE w.organization_id = $1 ORDER BY w.created_at, w.id`,
    [organizationId],
  );
}

export async function findApiKeyByLookup(q: Queryable, lookupId: string): Promise<ApiKeyRow | undefined> {
  const rows = await q.query<ApiKeyRow>(
    `SELECT k.id, k.lookup_id, k.key_hash, k.organization_id, k.workspace_id, k.description,
            k.created_at, k.revoked_at, o.plan
       FROM api_keys k JOIN organizations o ON o.id = k.organization_id
      WHERE k.lookup_id = $1`,
    [lookupId],
  );
  return rows[0];
}

export async function listApiKeys(q: Queryable, organizationId: string): Promise<ApiKeyRow[]> {
  return q.query<ApiKeyRow>(
    `SELECT k.id, k.lookup_id, k.key_hash, k.organization_id, k.workspace_id, k.description,
            k.created_at, k.revoked_at, o.plan
       FROM api_keys k JOIN organizations o ON o.id = k.organization_id
      WHERE k.organization_id = $1 ORDER BY k.created_at, k.id`,
    [organizationId],
  );
}

/** Marks a key revoked; returns false when no live key has that id or lookup id. */
export async function revokeApiKey(q: Queryable, idOrLookup: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    `UPDATE api_keys SET revoked_at = $2
      WHERE (lookup_id = $1 OR id::text = $1) AND revoked_at IS NULL
      RETURNING id`,
    [idOrLookup, now],
  );
  return rows.length > 0;
}

/** Serialises first-start bootstraps of several processes sharing one database. */
export async function lockTenancy(q: Queryable): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('slipway-tenancy-bootstrap'))");
}

async function readSetting(q: Queryable, name: string): Promise<string | undefined> {
  const rows = await q.query<{ value: string }>("SELECT value FROM control_settings WHERE name = $1", [name]);
  return rows[0]?.value;
}

/** Writes a setting unless one exists; returns the value in force. */
export async function initSetting(q: Queryable, name: string, value: string, now: Date): Promise<string> {
  await q.query("INSERT INTO control_settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING", [name, value, now]);
  return (await readSetting(q, name))!;
}
