import type { Queryable } from "../../storage/database.ts";

/** SQL for uploaded sources. Every statement names the workspace and the deployment. */

interface UploadRow {
  object_path: string;
  workspace_id: string;
  deployment_id: string;
  sha256: string | null;
  size_bytes: number | null;
  created_at: Date | string;
  uploaded_at: Date | string | null;
}

const COLUMNS = "object_path, workspace_id, deployment_id, sha256, size_bytes::float8 AS size_bytes, created_at, uploaded_at";

export async function insertUpload(q: Queryable, row: { objectPath: string; workspaceId: string; deploymentId: string; now: Date }): Promise<void> {
  await q.query("INSERT INTO uploads (object_path, workspace_id, deployment_id, created_at) VALUES ($1, $2, $3, $4)", [
    row.objectPath,
    row.workspaceId,
    row.deploymentId,
    row.now.toISOString(),
  ]);
}

export async function findUpload(q: Queryable, workspaceId: string, deploymentId: string, objectPath: string): Promise<UploadRow | undefined> {
  const rows = await q.query<UploadRow>(`SELECT ${COLUMNS} FROM uploads WHERE workspace_id = $1 AND deployment_id = $2 AND object_path = $3`, [
    workspaceId,
    deploymentId,
    objectPath,
  ]);
  return rows[0];
}

/** The upload a signed URL names (the signature already proved who made it). */
export async function findUploadByPath(q: Queryable, deploymentId: string, objectPath: string): Promise<UploadRow | undefined> {
  const rows = await q.query<UploadRow>(`SELECT ${COLUMNS} FROM uploads WHERE deployment_id = $1 AND object_path = $2`, [deploymentId, objectPath]);
  return rows[0];
}

export async function markUploaded(q: Queryable, objectPath: string, done: { sha256: string; sizeBytes: number; now: Date }): Promise<void> {
  await q.query("UPDATE uploads SET sha256 = $2, size_bytes = $3, uploaded_at = $4 WHERE object_path = $1", [
    objectPath,
    done.sha256,
    done.sizeBytes,
    done.now.toISOString(),
  ]);
}
