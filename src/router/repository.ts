import type { Queryable } from "../storage/database.ts";

/** SQL the router needs: who owns a deployment, and what it serves. */

export interface RoutedDeployment {
  id: string;
  workspace_id: string;
  organization_id: string;
  status: string;
  active_revision_id: string | null;
  latest_revision_id: string | null;
  latest_status: string | null;
}

export async function findRoutedDeployment(q: Queryable, id: string): Promise<RoutedDeployment | undefined> {
  const rows = await q.query<RoutedDeployment>(
    `SELECT d.id, d.workspace_id, w.organization_id, d.status, d.active_revision_id, d.latest_revision_id, r.status AS latest_status
       FROM deployments d JOIN workspaces w ON w.id = d.workspace_id
       LEFT JOIN revisions r ON r.id = d.latest_revision_id
      WHERE d.id = $1`,
    [id],
  );
  return rows[0];
}

/** Deployments answering at their own host name (source_config.custom_url). */
export async function customHosts(q: Queryable): Promise<{ id: string; custom_url: string }[]> {
  return q.query(
    `SELECT id, source_config->>'custom_url' AS custom_url FROM deployments
      WHERE source_config->>'custom_url' IS NOT NULL AND status <> 'AWAITING_DELETE'`,
  );
}
