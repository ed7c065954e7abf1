import { describe, expect, it } from "vitest";
import { buildsToKeep, mayPrune, type RevisionBuild } from "./retention.ts";

const deployed = (seq: number, build_key: string | null): RevisionBuild => ({ seq, status: "DEPLOYED", build_key });

describe("which builds a deployment keeps", () => {
  it("keeps the builds of its last revisions that deployed, the serving one among them", () => {
    const revisions = [deployed(1, "a"), deployed(2, "b"), deployed(3, "c"), deployed(4, "d")];
    expect(buildsToKeep(revisions, "d", 3)).toEqual(new Set(["d", "c", "b"]));
    expect(buildsToKeep(revisions, "d", 1)).toEqual(new Set(["d"]));
  });

  it("counts builds, not revisions: redeploys of one build keep older ones too", () => {
    const revisions = [deployed(1, "a"), deployed(2, "b"), deployed(3, "b"), deployed(4, "b")];
    expect(buildsToKeep(revisions, "b", 2)).toEqual(new Set(["b", "a"]));
  });

  it("removes the build of a revision that failed to deploy, and failed revisions have none to keep", () => {
    const revisions: RevisionBuild[] = [
      deployed(1, "a"),
      { seq: 2, status: "DEPLOY_FAILED", build_key: "broken" },
      { seq: 3, status: "BUILD_FAILED", build_key: null },
      { seq: 4, status: "INTERRUPTED", build_key: "stopped" },
    ];
    expect(buildsToKeep(revisions, "a", 3)).toEqual(new Set(["a"]));
  });

  it("always keeps the active revision's build, even past the limit", () => {
    // A rollback made elsewhere: the active revision is not the latest that deployed.
    const revisions = [deployed(1, "a"), deployed(2, "b"), deployed(3, "c")];
    expect(buildsToKeep(revisions, "a", 1)).toEqual(new Set(["c", "a"]));
  });

  it("keeps nothing of a deployment that never deployed or runs an image", () => {
    expect(buildsToKeep([{ seq: 1, status: "BUILD_FAILED", build_key: null }], null, 3)).toEqual(new Set());
    expect(buildsToKeep([deployed(1, null)], null, 3)).toEqual(new Set());
  });

  it("waits while a revision is in flight or UNKNOWN: it may be about to use any build", () => {
    expect(mayPrune([deployed(1, "a"), { seq: 2, status: "BUILD_FAILED", build_key: null }, { seq: 3, status: "QUEUED", build_key: null }])).toBe(true);
    for (const status of ["CREATING", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "UNKNOWN"] as const) {
      expect(mayPrune([deployed(1, "a"), { seq: 2, status, build_key: null }]), status).toBe(false);
    }
  });
});
