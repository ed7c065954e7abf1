import { conflict } from "../../http/errors.ts";

/**
 * The revision state machine: the one place that says which status may follow which.
 * Every status written after a revision's creation is checked here: the pipeline's steps
 * and interrupts through `RevisionService.advance`, the queue through `planNewRevision`
 * and `planAfterSettle`, a deletion's interrupts through `mayBecome` (revisions/service.ts).
 *
 *   QUEUED ──► CREATING ──► AWAITING_BUILD ──► BUILDING ──► AWAITING_DEPLOY ──► DEPLOYING ──► DEPLOYED
 *     │            │  └───────── (image sources skip the build) ───────┘              │
 *     ▼            ▼                    ▼                                    ▼         ▼
 *  SKIPPED   CREATE_FAILED         BUILD_FAILED                       DEPLOY_FAILED
 *  (and every waiting or in-flight status can become INTERRUPTED)
 *
 * UNKNOWN is the vendor's (a revision whose outcome its control plane lost). Slipway
 * never sets it: a job cut short resumes at its recorded status instead.
 */
export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "DEPLOYED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;

export type RevisionStatus = (typeof REVISION_STATUSES)[number];

const TRANSITIONS: Readonly<Record<RevisionStatus, readonly RevisionStatus[]>> = {
  QUEUED: ["CREATING", "SKIPPED", "INTERRUPTED"],
  CREATING: ["AWAITING_BUILD", "AWAITING_DEPLOY", "CREATE_FAILED", "INTERRUPTED"],
  AWAITING_BUILD: ["BUILDING", "BUILD_FAILED", "INTERRUPTED"],
  BUILDING: ["AWAITING_DEPLOY", "BUILD_FAILED", "INTERRUPTED"],
  AWAITING_DEPLOY: ["DEPLOYING", "DEPLOY_FAILED", "INTERRUPTED"],
  DEPLOYING: ["DEPLOYED", "DEPLOY_FAILED", "INTERRUPTED"],
  // Never set here (see above): nothing leads to it, and nothing from it.
  UNKNOWN: [],
  CREATE_FAILED: [],
  BUILD_FAILED: [],
  DEPLOY_FAILED: [],
  DEPLOYED: [],
  SKIPPED: [],
  INTERRUPTED: [],
};

/** Statuses of a revision the pipeline is working on. At most one per deployment. */
export const IN_FLIGHT: readonly RevisionStatus[] = ["CREATING", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];

export function isInFlight(status: RevisionStatus): boolean {
  return IN_FLIGHT.includes(status);
}

/**
 * No status may follow. UNKNOWN is not terminal: a client that meets one (the vendor's
 * control plane sets it) keeps waiting for the revision's outcome.
 */
export function isTerminal(status: RevisionStatus): boolean {
  return status !== "UNKNOWN" && TRANSITIONS[status].length === 0;
}

/** The vendor's client rule: any status containing FAILED is a failure. */
export function isFailure(status: RevisionStatus): boolean {
  return status.includes("FAILED");
}

export function canTransition(from: RevisionStatus, to: RevisionStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Every status that may change to `to`: what a change of many revisions at once (a deletion's interrupts) starts from. */
export function mayBecome(to: RevisionStatus): RevisionStatus[] {
  return REVISION_STATUSES.filter((from) => canTransition(from, to));
}

/** Checks one step against the table; refuses anything else with a conflict (409). */
export function transition(from: RevisionStatus, to: RevisionStatus): RevisionStatus {
  if (!canTransition(from, to)) {
    throw conflict(`Revision status cannot change from ${from} to ${to}.`);
  }
  return to;
}

/** A sibling revision of the same deployment, oldest first. */
export interface Sibling {
  id: string;
  status: RevisionStatus;
  /** A waiting revision does not start before this (a push waits for newer pushes). */
  not_before?: Date | string | null;
}

/**
 * The queue rule for a new revision: it starts at once (CREATING) when nothing of its
 * deployment is in flight, otherwise it waits (QUEUED). Either way, revisions still
 * waiting are superseded by the newer one and become SKIPPED: only the latest wish builds.
 */
export function planNewRevision(siblings: readonly Sibling[], delayed = false): { status: "CREATING" | "QUEUED"; skip: string[] } {
  const busy = siblings.some((s) => isInFlight(s.status));
  const skip = siblings.filter((s) => s.status === "QUEUED").map((s) => s.id);
  return { status: busy || delayed ? "QUEUED" : "CREATING", skip };
}

/**
 * What to start once a revision has left flight: the newest waiting revision, if nothing
 * else is in flight. (By `planNewRevision` at most one is waiting; should there be more,
 * the older ones are skipped.)
 */
export function planAfterSettle(siblings: readonly Sibling[], now?: Date): { start?: string; skip: string[] } {
  if (siblings.some((s) => isInFlight(s.status))) return { skip: [] };
  const queued = siblings.filter((s) => s.status === "QUEUED");
  const newest = queued.at(-1);
  const due = !newest?.not_before || !now || new Date(newest.not_before).getTime() <= now.getTime();
  return { start: due ? newest?.id : undefined, skip: queued.slice(0, -1).map((s) => s.id) };
}

/**
 * Traffic follows the latest *ready* revision, not the latest created one (Knative's rule):
 * `active_revision_id` moves only when a revision reaches DEPLOYED, so a failed, skipped or
 * interrupted revision never takes traffic from the one serving.
 */
export function activeRevisionAfter(currentActive: string | null, revisionId: string, to: RevisionStatus): string | null {
  return to === "DEPLOYED" ? revisionId : currentActive;
}
