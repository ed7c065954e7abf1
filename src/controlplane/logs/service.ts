import type { ControlPlaneDeps } from "../context.ts";
import { findDeployment } from "../deployments/repository.ts";
import { deploymentNotFound, revisionNotFound } from "../deployments/not-found.ts";
import * as revisions from "../revisions/repository.ts";
import { isTerminal } from "../revisions/state-machine.ts";
import { LOG_LEVELS, type LogLevel, type LogType, type NewLogLine } from "./lines.ts";
import * as repo from "./repository.ts";
import type { LogsPage } from "./schemas.ts";

interface LogFilter {
  type: LogType;
  revisionId?: string;
  limit: number;
  offset: number;
  order: "asc" | "desc";
  level?: LogLevel | null;
  query?: string | null;
  startTime?: string | null;
  endTime?: string | null;
}

/** A log line as the API shows it. */
type LogEntry = ReturnType<typeof toEntry>;

/** Where a followed log is: its revision and type, and the last line already sent. */
interface LogTarget {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  type: LogType;
  afterSeq?: number;
}

/**
 * Reading build and deploy logs: pages, and a follow mode while a revision builds or runs.
 *
 * @example
 * const logs = new LogService({ db });
 * const page = await logs.read(workspaceId, deploymentId, { type: "build", limit: 50, offset: 0, order: "asc" });
 */
export class LogService {
  constructor(private readonly deps: Pick<ControlPlaneDeps, "db">) {}

  async read(workspaceId: string, deploymentId: string, filter: LogFilter): Promise<LogsPage> {
    await this.mustExist(workspaceId, deploymentId, filter.revisionId);
    const rows = await repo.queryLogs(this.deps.db, {
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
   * Follows a revision's log (check it exists first: `mustExist`): awaits `send` with each
   * line after `afterSeq`, polling every half second, until the log can grow no more (the
   * build is over, or the revision no longer runs) or `signal` aborts.
   */
  async follow(target: LogTarget, send: (entry: LogEntry) => Promise<void>, signal: AbortSignal): Promise<void> {
    let after = target.afterSeq;
    let quietRounds = 0;
    while (!signal.aborted) {
      const rows = await repo.queryLogs(this.deps.db, { ...target, afterSeq: after, order: "asc", limit: 500, offset: 0 });
      for (const row of rows) await send(toEntry(row));
      if (rows.length > 0) after = rows.at(-1)!.seq;
      if (rows.length === 500) continue;
      if (await this.logIsOver(target)) {
        // One more quiet round: lines written just before the status moved are still read.
        if (++quietRounds > 1) return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /** Stores lines of revisions' logs (the pipeline's LogWriter sends them in batches). */
  async append(lines: readonly NewLogLine[]): Promise<void> {
    await repo.insertLogLines(this.deps.db, lines);
  }

  /** Keeps the newest `keep` lines of a revision's log of one type. */
  async trim(revisionId: string, type: LogType, keep: number): Promise<void> {
    await repo.trimLog(this.deps.db, revisionId, type, keep);
  }

  /** 404 for a deployment or revision the workspace does not have. */
  async mustExist(workspaceId: string, deploymentId: string, revisionId?: string): Promise<void> {
    const { db } = this.deps;
    if (!(await findDeployment(db, workspaceId, deploymentId))) throw deploymentNotFound(deploymentId);
    if (revisionId && !(await revisions.getRevision(db, workspaceId, deploymentId, revisionId))) throw revisionNotFound(revisionId);
  }

  private async logIsOver(target: LogTarget): Promise<boolean> {
    const { db } = this.deps;
    const revision = await revisions.getRevision(db, target.workspaceId, target.deploymentId, target.revisionId);
    if (!revision) return true;
    if (target.type === "build") return !["QUEUED", "CREATING", "AWAITING_BUILD", "BUILDING"].includes(revision.status);
    if (!isTerminal(revision.status)) return false;
    // A deployed revision logs for as long as it serves.
    const deployment = await findDeployment(db, target.workspaceId, target.deploymentId);
    return deployment?.active_revision_id !== target.revisionId;
  }
}

function atOrAbove(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(LOG_LEVELS.indexOf(level));
}

function toEntry(row: repo.LogRow) {
  return { id: String(row.seq), timestamp: new Date(row.timestamp).toISOString(), level: row.level, message: row.message };
}
