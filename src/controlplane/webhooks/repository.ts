import type { Queryable } from "../../storage/database.ts";

/** SQL for push webhooks. The integration is found by its id alone: the signature proves the caller. */

export async function findIntegrationForWebhook(
  q: Queryable,
  id: string,
): Promise<{ id: string; workspace_id: string; webhook_secret_sealed: string | null } | undefined> {
  const rows = await q.query<{ id: string; workspace_id: string; webhook_secret_sealed: string | null }>(
    "SELECT id, workspace_id, webhook_secret_sealed FROM integrations WHERE id = $1",
    [id],
  );
  return rows[0];
}

/** Deployments of the workspace that build on push through this integration. */
export async function pushDeployments(q: Queryable, workspaceId: string, integrationId: string): Promise<{ id: string; repo_url: string }[]> {
  return q.query(
    `SELECT id, source_config->>'repo_url' AS repo_url FROM deployments
      WHERE workspace_id = $1 AND source_config->>'integration_id' = $2
        AND (source_config->>'build_on_push')::boolean IS TRUE AND status <> 'AWAITING_DELETE'`,
    [workspaceId, integrationId],
  );
}
