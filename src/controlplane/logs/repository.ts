import type { Queryable } from "../../storage/database.ts";
import type { LogLevel, LogType, NewLogLine } from "./lines.ts";

/** SQL for build and deploy logs. Every read names the workspace: another workspace's logs are missing logs. */

export interface LogRow {
  seq: number;
  revision_id: string;
  level: LogLevel;
  message: string;
  timestamp: Date | string;
}

/** One statement for a batch: lines arrive in bursts (an install prints hundreds). */
export async function insertLogLines(q: Queryable, lines: readonly NewLogLine[]): Promise<void> {
  if (lines.length === 0) return;
  await q.query(
    `INSERT INTO revision_logs (workspace_id, deployment_id, revision_id, type, level, message, timestamp)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
    [
      lines.map((l) => l.workspaceId),
      lines.map((l) => l.deploymentId),
      lines.map((l) => l.revisionId),
      lines.map((l) => l.type),
      lines.map((l) => l.level),
      lines.map((l) => l.message),
      lines.map((l) => l.timestamp.toISOString()),
    ],
  );
}

/** Keeps the newest `keep` lines of a revision's log of one type. */
export async function trimLog(q: Queryable, revisionId: string, type: LogType, keep: number): Promise<void> {
  await q.query(
    `DELETE FROM revision_logs WHERE revision_id = $1 AND type = $2 AND seq <= (
       SELECT seq FROM revision_logs WHERE revision_id = $1 AND type = $2 ORDER BY seq DESC OFFSET $3 LIMIT 1)`,
    [revisionId, type, keep],
  );
}

interface LogQuery {
  workspaceId: string;
  deploymentId: string;
  /** Omitted: every revision of the deployment. */
  revisionId?: string;
  type: LogType;
  /** Lines at or above this level. */
  levels?: readonly LogLevel[];
  /** Case-insensitive substring of the message. */
  contains?: string;
  startTime?: Date;
  endTime?: Date;
  /** Only lines after this sequence number (following a log). */
  afterSeq?: number;
  order: "asc" | "desc";
  limit: number;
  offset: number;
}

export async function queryLogs(q: Queryable, f: LogQuery): Promise<LogRow[]> {
  // Each filter is "parameter is null or it matches", so one statement serves every combination.
  return q.query<LogRow>(
    `SELECT seq, revision_id, level, message, timestamp FROM revision_logs
      WHERE workspace_id = $1 AND deployment_id = $2 AND type = $3
        AND ($4::uuid IS NULL OR revision_id = $4)
        AND ($5::text[] IS NULL OR level = ANY($5::text[]))
        AND ($6::text IS NULL OR strpos(lower(message), lower($6)) > 0)
        AND ($7::timestamptz IS NULL OR timestamp >= $7)
        AND ($8::timestamptz IS NULL OR timestamp <= $8)
        AND ($9::bigint IS NULL OR seq > $9)
      ORDER BY seq ${f.order === "asc" ? "ASC" : "DESC"} LIMIT $10 OFFSET $11`,
    [
      f.workspaceId,
      f.deploymentId,
      f.type,
      f.revisionId ?? null,
      f.levels ?? null,
      f.contains ?? null,
      f.startTime?.toISOString() ?? null,
      f.endTime?.toISOString() ?? null,
      f.afterSeq ?? null,
      f.limit,
      f.offset,
    ],
  );
}
