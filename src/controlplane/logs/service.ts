import type { ControlPlaneDeps } from "../context.ts";
import { findDeployment } from "../deployments/repository.ts";
import * as revisions from "../revisions/repository.ts";
import { deploymentNotFound, revisionNotFound } from "../revisions/service.ts";
import { isTerminal } from "../revisions/state-machine.ts";
import * as repo from "./repository.ts";
import type { LogsPage } from "./schemas.ts";

/** Reading build and deploy logs: pages, and a follow mode while a revision builds or runs. */

interface LogFilter {
  type: repo.LogType;
  revisionId?: string;
  limit: number;
  offset: number;
  order: "asc" | "desc";
  level?: repo.LogLevel | null;
  query?: string | null;
  startTime?: string | null;
  endTime?: string | null;
}

export async function readLogs(deps: ControlPlaneDeps, workspaceId: string, deploymentId: string, filter: LogFilter): Promise<LogsPage> {
  await mustExist(deps, workspaceId, deploymentId, filter.revisionId);
  const rows = await repo.queryLogs(deps.db, {
    workspaceId,
    deploymentId,
    revisionId: filter.revisionId,
    type: filter.type,
    levels: filter.level ? atOrAbove(filter.level) : undefined,
    contains: filter.query ?? undefined,
    startTime: filter.startTime ? new Date(filter.startTime) : undefined,
    endTime: filter.endTime ? new Date(filter.endTime) : undefined,
    order: filter.order,
    // One more than asked: whether another page exists.
    limit: filter.limit + 1,
    offset: filter.offset,
  });
  const page = rows.slice(0, filter.limit);
  return { logs: page.map(toEntry), next_offset: rows.length > filter.limit ? filter.offset + filter.limit : null };
}

/**
 * Follows a revision's log (check it exists first: `mustExist`): calls `send` with each line after `afterSeq`, polling every
 * half second, until the log can grow no more (the build is over, or the revision no
 * longer runs) or `signal` aborts.
 */
export async function followLog(
  deps: ControlPlaneDeps,
  target: { workspaceId: string; deploymentId: string; revisionId: string; type: repo.LogType; afterSeq?: number },
  send: (entry: ReturnType<typeof toEntry>) => void,
  signal: AbortSignal,
): Promise<void> {
  let after = target.afterSeq;
  let quietRounds = 0;
  while (!signal.aborted) {
    const rows = await repo.queryLogs(deps.db, { ...target, afterSeq: after, order: "asc", limit: 500, offset: 0 });
    for (const row of rows) send(toEntry(row));
    if (rows.length > 0) after = rows.at(-1)!.seq;
    if (rows.length === 500) continue;
    if (await logIsOver(deps, target)) {
      // One more quiet round: lines written just before the status moved are still read.
      if (++quietRounds > 1) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function logIsOver(deps: ControlPlaneDeps, target: { workspaceId: string; deploymentId: string; revisionId: string; type: repo.LogType }): Promise<boolean> {
  const revision = await revisions.getRevision(deps.db, target.workspaceId, target.deploymentId, target.revisionId);
  if (!revision) return true;
  if (target.type === "build") return !["QUEUED", "CREATING", "AWAITING_BUILD", "BUILDING"].includes(revision.status);
  if (!isTerminal(revision.status)) return false;
  // A deployed revision logs for as long as it serves.
  const deployment = await findDeployment(deps.db, target.workspaceId, target.deploymentId);
  return deployment?.active_revision_id !== target.revisionId;
}

/** 404 for a deployment or revision the workspace does not have. */
export async function mustExist(deps: ControlPlaneDeps, workspaceId: string, deploymentId: string, revisionId?: string): Promise<void> {
  if (!(await findDeployment(deps.db, workspaceId, deploymentId))) throw deploymentNotFound(deploymentId);
  if (revisionId && !(await revisions.getRevision(deps.db, workspaceId, deploymentId, revisionId))) throw revisionNotFound(revisionId);
}

function atOrAbove(level: repo.LogLevel): repo.LogLevel[] {
  return repo.LOG_LEVELS.slice(repo.LOG_LEVELS.indexOf(level));
}

function toEntry(row: repo.LogRow) {
  return { id: String(row.seq), timestamp: new Date(row.timestamp).toISOString(), level: row.level, message: row.message };
}
