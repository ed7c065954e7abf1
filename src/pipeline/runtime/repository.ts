import type { Queryable } from "../../storage/database.ts";

/** SQL for what the runtime serves. */

export interface ServedRevision {
  deployment_id: string;
  workspace_id: string;
  revision_id: string;
  build_key: string | null;
  resource_spec: Record<string, unknown> | null;
  secrets_sealed: Record<string, string>;
}

/** The active revision of every deployment not being deleted: what a start serves again. */
export async function activeRevisions(q: Queryable): Promise<ServedRevision[]> {
  return q.query<ServedRevision>(
    `SELECT d.id AS deployment_id, d.workspace_id, r.id AS revision_id, r.build_key, r.resource_spec, r.secrets_sealed
       FROM deployments d JOIN revisions r ON r.id = d.active_revision_id
      WHERE d.status <> 'AWAITING_DELETE' ORDER BY d.seq`,
  );
}
