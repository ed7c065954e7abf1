import type { Queryable } from "../../storage/database.ts";

/** How many of a workspace's deployments (or revisions) are in each status. */
export async function countByStatus(q: Queryable, table: "deployments" | "revisions", workspaceId: string): Promise<Map<string, number>> {
  const rows = await q.query<{ status: string; n: string | number }>(`SELECT status, count(*) AS n FROM ${table} WHERE workspace_id = $1 GROUP BY status`, [
    workspaceId,
  ]);
  return new Map(rows.map((row) => [row.status, Number(row.n)]));
}

/** The ids of a workspace's deployments (to pick out its router requests). */
export async function deploymentIds(q: Queryable, workspaceId: string): Promise<Set<string>> {
  const rows = await q.query<{ id: string }>(`SELECT id FROM deployments WHERE workspace_id = $1`, [workspaceId]);
  return new Set(rows.map((row) => row.id));
}

/**
 * How long the workspace's most recent builds took, from their build logs' first and last
 * lines (kept with the revision, so every control plane on one database sees them), with
 * whether the build ended well (the revision went on to deploy) or failed.
 */
export async function recentBuildDurations(q: Queryable, workspaceId: string, limit = 500): Promise<{ seconds: number; outcome: "built" | "failed" }[]> {
  const rows = await q.query<{ seconds: string | number; status: string }>(
    `SELECT EXTRACT(EPOCH FROM max(l.timestamp) - min(l.timestamp)) AS seconds, r.status
       FROM (SELECT id, status FROM revisions
              WHERE workspace_id = $1 AND status IN ('AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED', 'DEPLOY_FAILED', 'BUILD_FAILED')
              ORDER BY seq DESC LIMIT $2) r
       JOIN revision_logs l ON l.revision_id = r.id AND l.type = 'build'
      GROUP BY r.id, r.status`,
    [workspaceId, limit],
  );
  return rows.map((row) => ({ seconds: Math.max(0, Number(row.seconds)), outcome: row.status === "BUILD_FAILED" ? "failed" : "built" }));
}
