/**
 * Which run statuses are still in progress and which are final (the statuses of
 * runs/schemas.ts). Every check of a run's status, in code and in SQL, goes through here.
 */
export const ACTIVE_STATUSES = ["pending", "running"] as const;
export const TERMINAL_STATUSES = ["success", "error", "timeout", "interrupted"] as const;

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** `status IN ('pending', 'running')` for a column: the statuses are constants, not input. */
export function activeStatusSql(column = "status"): string {
  return `${column} IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
}
