import { describe, expect, it } from "vitest";
import { RUN_STATUSES } from "./runs/schemas.ts";
import { ACTIVE_STATUSES, activeStatusSql, isTerminal, TERMINAL_STATUSES } from "./run-statuses.ts";

describe("run statuses", () => {
  it("split the wire's statuses into active and terminal, each once", () => {
    expect([...ACTIVE_STATUSES, ...TERMINAL_STATUSES].sort()).toEqual([...RUN_STATUSES].sort());
    for (const status of ACTIVE_STATUSES) expect(isTerminal(status)).toBe(false);
    for (const status of TERMINAL_STATUSES) expect(isTerminal(status)).toBe(true);
  });

  it("give SQL the active statuses for a column", () => {
    expect(activeStatusSql()).toBe("status IN ('pending', 'running')");
    expect(activeStatusSql("r.status")).toBe("r.status IN ('pending', 'running')");
  });
});
