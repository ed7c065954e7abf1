import { describe, expect, it } from "vitest";
import { SlipwayError } from "../../http/errors.ts";
import {
  activeRevisionAfter,
  canTransition,
  IN_FLIGHT,
  isFailure,
  isInFlight,
  isTerminal,
  mayBecome,
  planAfterSettle,
  planNewRevision,
  REVISION_STATUSES,
  transition,
  type RevisionStatus,
} from "./state-machine.ts";

describe("revision statuses", () => {
  it("are exactly the vendor's 13", () => {
    expect([...REVISION_STATUSES].sort()).toEqual(
      [
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
      ].sort(),
    );
  });

  it("classify in flight, terminal and failure", () => {
    expect(IN_FLIGHT).toEqual(["CREATING", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"]);
    expect(isInFlight("QUEUED")).toBe(false);
    expect(isInFlight("DEPLOYED")).toBe(false);
    const terminal = REVISION_STATUSES.filter(isTerminal);
    expect(terminal.sort()).toEqual(["BUILD_FAILED", "CREATE_FAILED", "DEPLOYED", "DEPLOY_FAILED", "INTERRUPTED", "SKIPPED"]);
    expect(isTerminal("UNKNOWN")).toBe(false);
    expect(REVISION_STATUSES.filter(isFailure).sort()).toEqual(["BUILD_FAILED", "CREATE_FAILED", "DEPLOY_FAILED"]);
  });
});

describe("transition", () => {
  it("walks the happy path of a built source", () => {
    const path: RevisionStatus[] = ["QUEUED", "CREATING", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED"];
    for (let i = 1; i < path.length; i++) expect(transition(path[i - 1], path[i])).toBe(path[i]);
  });

  it("lets image sources skip the build", () => {
    expect(canTransition("CREATING", "AWAITING_DEPLOY")).toBe(true);
  });

  it("refuses leaving a terminal status with a 409 conflict", () => {
    for (const from of REVISION_STATUSES.filter(isTerminal)) {
      for (const to of REVISION_STATUSES) {
        expect(canTransition(from, to)).toBe(false);
      }
    }
    try {
      transition("DEPLOYED", "BUILDING");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(SlipwayError);
      expect((error as SlipwayError).code).toBe("conflict");
      expect((error as SlipwayError).message).toContain("DEPLOYED to BUILDING");
    }
  });

  it("refuses skipping steps and going backwards", () => {
    expect(canTransition("CREATING", "DEPLOYED")).toBe(false);
    expect(canTransition("AWAITING_BUILD", "DEPLOYING")).toBe(false);
    expect(canTransition("DEPLOYING", "BUILDING")).toBe(false);
    expect(canTransition("QUEUED", "BUILDING")).toBe(false);
    expect(canTransition("CREATING", "QUEUED")).toBe(false);
    expect(canTransition("CREATING", "CREATING")).toBe(false);
  });

  it("lets only waiting revisions be skipped, and waiting or in-flight ones be interrupted", () => {
    expect(mayBecome("SKIPPED")).toEqual(["QUEUED"]);
    expect(mayBecome("INTERRUPTED").sort()).toEqual([...IN_FLIGHT, "QUEUED"].sort());
  });

  it("only a deploying revision can become DEPLOYED", () => {
    expect(mayBecome("DEPLOYED")).toEqual(["DEPLOYING"]);
  });

  it("never leads to or from UNKNOWN, which only the vendor sets", () => {
    expect(mayBecome("UNKNOWN")).toEqual([]);
    expect(REVISION_STATUSES.filter((to) => canTransition("UNKNOWN", to))).toEqual([]);
  });
});

describe("queue rule", () => {
  it("starts a revision at once when nothing is in flight", () => {
    expect(planNewRevision([])).toEqual({ status: "CREATING", skip: [] });
    expect(
      planNewRevision([
        { id: "a", status: "DEPLOYED" },
        { id: "b", status: "BUILD_FAILED" },
      ]),
    ).toEqual({ status: "CREATING", skip: [] });
  });

  it("queues behind an in-flight revision and skips older queued ones", () => {
    const siblings = [
      { id: "a", status: "BUILDING" as const },
      { id: "b", status: "SKIPPED" as const },
      { id: "c", status: "QUEUED" as const },
    ];
    expect(planNewRevision(siblings)).toEqual({ status: "QUEUED", skip: ["c"] });
  });

  it("starts the newest queued revision once flight is clear", () => {
    expect(
      planAfterSettle([
        { id: "a", status: "DEPLOYED" },
        { id: "c", status: "QUEUED" },
      ]),
    ).toEqual({ start: "c", skip: [] });
    expect(
      planAfterSettle([
        { id: "x", status: "QUEUED" },
        { id: "y", status: "QUEUED" },
      ]),
    ).toEqual({ start: "y", skip: ["x"] });
    expect(
      planAfterSettle([
        { id: "a", status: "DEPLOYING" },
        { id: "c", status: "QUEUED" },
      ]),
    ).toEqual({ skip: [] });
    expect(planAfterSettle([{ id: "a", status: "DEPLOY_FAILED" }])).toEqual({ start: undefined, skip: [] });
  });

  it("holds a delayed revision (a push's quiet period) until it is due, even with nothing in flight", () => {
    expect(planNewRevision([], true)).toEqual({ status: "QUEUED", skip: [] });
    const now = new Date("2026-01-01T00:00:10Z");
    const waiting = { id: "p", status: "QUEUED" as const, not_before: "2026-01-01T00:00:12Z" };
    expect(planAfterSettle([waiting], now)).toEqual({ start: undefined, skip: [] });
    expect(planAfterSettle([waiting], new Date("2026-01-01T00:00:12Z"))).toEqual({ start: "p", skip: [] });
    expect(planAfterSettle([{ id: "o", status: "QUEUED" }, waiting], now)).toEqual({ start: undefined, skip: ["o"] });
  });

  it("moves the active revision only on DEPLOYED", () => {
    for (const to of REVISION_STATUSES) {
      expect(activeRevisionAfter("old", "new", to)).toBe(to === "DEPLOYED" ? "new" : "old");
    }
    expect(activeRevisionAfter(null, "new", "DEPLOY_FAILED")).toBeNull();
  });
});
