import { describe, expect, it } from "vitest";
import { queueAnnouncement, readQueueAnnouncement, schemaChannel } from "./announcements.ts";

describe("queue announcements", () => {
  it("read back what was written", () => {
    const written = queueAnnouncement("6f1c3c1e-0000-4000-8000-000000000001", 2.5, "6f1c3c1e-0000-4000-8000-000000000002");
    expect(readQueueAnnouncement(written)).toEqual({
      runId: "6f1c3c1e-0000-4000-8000-000000000001",
      delaySeconds: 2.5,
      threadId: "6f1c3c1e-0000-4000-8000-000000000002",
      claimed: false,
    });
  });

  it("read a run claimed by its creator as claimed, as migration 0022 writes it", () => {
    const written = queueAnnouncement("r1", 0, "t1", true);
    expect(written).toBe("r1 0 t1 claimed");
    expect(readQueueAnnouncement(written)).toEqual({ runId: "r1", delaySeconds: 0, threadId: "t1", claimed: true });
  });

  it("read a change of a thread's queue as no run", () => {
    expect(readQueueAnnouncement(queueAnnouncement("-", 0, "t1"))).toEqual({ runId: undefined, delaySeconds: 0, threadId: "t1", claimed: false });
  });

  it("read a payload without delay or thread as a due run of an unknown thread", () => {
    expect(readQueueAnnouncement("r1")).toEqual({ runId: "r1", delaySeconds: 0, threadId: undefined, claimed: false });
    expect(readQueueAnnouncement("r1 nonsense")).toEqual({ runId: "r1", delaySeconds: 0, threadId: undefined, claimed: false });
  });
});

describe("schema channels", () => {
  it("name a channel after its schema, and hash a schema too long for an identifier", () => {
    expect(schemaChannel("slipway_runs", "agent")).toBe("slipway_runs_agent");
    const long = schemaChannel("slipway_runs", "d".repeat(80));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^slipway_runs_[0-9a-f]{40}$/);
    expect(long).not.toBe(schemaChannel("slipway_runs", "e".repeat(80)));
  });
});
