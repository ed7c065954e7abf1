import { isInFlight, type RevisionStatus } from "../../controlplane/revisions/state-machine.ts";

/**
 * Which builds of a deployment are kept (docs/decisions/0051): the `keep` most recent
 * distinct builds of its revisions that reached DEPLOYED (the serving one is the
 * latest), and the active revision's in any case. A redeploy of one of those revisions,
 * or a new revision of the same source and recipe, reuses its build; any other build
 * (superseded longer ago, or made by a revision that then failed to deploy) is removed.
 */
export interface RevisionBuild {
  /** Creation order. */
  seq: number;
  status: RevisionStatus;
  build_key: string | null;
}

export function buildsToKeep(revisions: readonly RevisionBuild[], activeBuildKey: string | null, keep: number): Set<string> {
  const kept = new Set<string>();
  const deployed = revisions.filter((r) => r.status === "DEPLOYED" && r.build_key !== null).sort((a, b) => b.seq - a.seq);
  for (const revision of deployed) {
    if (kept.size >= keep) break;
    kept.add(revision.build_key!);
  }
  if (activeBuildKey) kept.add(activeBuildKey);
  return kept;
}

/**
 * The rule is applied only while no revision of the deployment is in flight or UNKNOWN
 * (awaiting reconciliation): such a revision may be about to use any of its builds.
 */
export function mayPrune(revisions: readonly Pick<RevisionBuild, "status">[]): boolean {
  return !revisions.some((r) => r.status === "UNKNOWN" || isInFlight(r.status));
}
