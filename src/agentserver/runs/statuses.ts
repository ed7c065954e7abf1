import type { RunStatus } from "./schemas.ts";

/**
 * Which run statuses are still in progress and which are final. Every check of a run's
 * status, in code and in SQL, goes through here.
 */
export const ACTIVE_STATUSES = ["pending", "running"] as const satisfies readonly RunStatus[];
export const TERMINAL_STATUSES = ["success", "error", "timeout", "interrupted"] as const satisfies readonly RunStatus[];

export function isTerminal(status: RunStatus): boolean {
  return (TERMINAL_STATUSES as readonly RunStatus[]).includes(status);
}

/** `status IN ('pending', 'running')` for a column: the statuses are constants, not input. */
export function activeStatusSql(column = "status"): string {
  return `${column} IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
}
