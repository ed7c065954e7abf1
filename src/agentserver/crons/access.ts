import type { FastifyRequest } from "fastify";

/**
 * The seam for custom auth (langgraph.json `auth.path`, the SDK's `Auth` class) on
 * crons. It is not wired yet: without an authorizer every caller sees every cron, as
 * with `--api-key` alone.
 *
 * The vendor calls `auth.on.crons.<action>` (or `auth.on.crons`, or `auth.on`) with
 * the request's user and a value describing the call; the handler may refuse (401/403,
 * thrown as SlipwayError), return filters that limit which crons the caller sees, and
 * change the value (e.g. stamp `metadata.owner` on create). Routes call the authorizer
 * before the service; the service applies `filters` to every read and write (as
 * metadata containment: repository.ts, CronFilter.metadata) and records `userId` on
 * created crons. The scheduler runs a cron's runs as its `user_id` once runs carry a
 * user (to wire with custom auth).
 */
type CronAction = "create" | "read" | "update" | "delete" | "search";

export interface CronAccess {
  /** Crons outside these metadata pairs do not exist for this caller (404, absent from lists). */
  filters?: Record<string, unknown>;
  /** Recorded as the cron's `user_id` on create. */
  userId?: string | null;
}

export type CronAuthorizer = (request: FastifyRequest, action: CronAction, value: Record<string, unknown>) => Promise<CronAccess>;

/** No custom auth: everything is visible, no user is recorded. */
export const openCronAccess: CronAuthorizer = async () => ({});
