import { describe, expect, it } from "vitest";
import { Schedule, ScheduleError } from "./schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
/** The next `count` firings after `from`. */
function firings(expression: string, from: string, count: number, zone: string | null = null): Array<string | undefined> {
  const schedule = Schedule.parse(expression, zone);
  const out: Array<string | undefined> = [];
  let cursor = at(from);
  for (let i = 0; i < count; i++) {
    const next = schedule.nextAfter(cursor);
    out.push(iso(next));
    if (next === undefined) break;
    cursor = next;
  }
  return out;
}

describe("cron schedules (UTC)", () => {
  it("fires strictly after the given time, on whole seconds", () => {
    expect(firings("* * * * *", "2026-01-01T00:00:30.250Z", 2)).toEqual(["2026-01-01T00:01:00.000Z", "2026-01-01T00:02:00.000Z"]);
    expect(firings("* * * * *", "2026-01-01T00:01:00.000Z", 1)).toEqual(["2026-01-01T00:02:00.000Z"]);
  });

  it("reads a sixth field as seconds, last, as croniter (the vendor's parser) does", () => {
    expect(firings("* * * * * *", "2026-01-01T00:00:00.400Z", 3)).toEqual(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z"]);
    expect(firings("* * * * * */15", "2026-01-01T00:00:16Z", 2)).toEqual(["2026-01-01T00:00:30.000Z", "2026-01-01T00:00:45.000Z"]);
    expect(firings("0 12 * * * 30", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-01T12:00:30.000Z"]);
  });

  it("takes lists, ranges, steps, names and shorthands", () => {
    expect(firings("0,30 9-10 * * *", "2026-01-01T09:10:00Z", 4)).toEqual([
      "2026-01-01T09:30:00.000Z",
      "2026-01-01T10:00:00.000Z",
      "2026-01-01T10:30:00.000Z",
      "2026-01-02T09:00:00.000Z",
    ]);
    expect(firings("5/20 * * * *", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-01T00:05:00.000Z",
      "2026-01-01T00:25:00.000Z",
      "2026-01-01T00:45:00.000Z",
      "2026-01-01T01:05:00.000Z",
    ]);
    // 2026-01-03 is a Saturday: the next weekday morning of January is Monday the 5th.
    expect(firings("0 9 * JAN mon-fri", "2026-01-02T10:00:00Z", 1)).toEqual(["2026-01-05T09:00:00.000Z"]);
    expect(firings("@daily", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-02T00:00:00.000Z"]);
    expect(firings("@hourly", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-01T01:00:00.000Z"]);
    // 2026-01-04 is a Sunday; 7 is Sunday too.
    expect(firings("@weekly", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-04T00:00:00.000Z"]);
    expect(firings("0 0 * * 7", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-04T00:00:00.000Z"]);
  });

  it("matches either day field when both are restricted", () => {
    // 1 January 2026 is a Thursday: Fridays the 2nd and 9th, then Tuesday the 13th.
    expect(firings("0 0 13 * fri", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-02T00:00:00.000Z", "2026-01-09T00:00:00.000Z", "2026-01-13T00:00:00.000Z"]);
  });

  it("finds rare dates and says when a schedule never fires", () => {
    expect(firings("0 0 29 2 *", "2026-03-01T00:00:00Z", 1)).toEqual(["2028-02-29T00:00:00.000Z"]);
    expect(firings("0 0 30 2 *", "2026-01-01T00:00:00Z", 1)).toEqual([undefined]);
  });

  it.each([
    ["0 0 L * *", /day of month: "L"/],
    ["0 0 15W * *", /day of month: "W"/],
    ["0 0 * * 1#2", /day of week: "#"/],
    ["H * * * *", /minute: "H"/],
    ["0 0 1 1 * 0 2027", /seventh \(year\) field/],
    ["* * * *", /expected 5 fields .* got 4/],
    ["61 * * * *", /minute: 61 is outside 0-59/],
    ["5-1 * * * *", /runs backwards/],
    ["*/0 * * * *", /step must be at least 1/],
    ["? * * * *", /minute: "\?" is not a value/],
    ["@every 5m", /unknown shorthand/],
    ["0 0 * foo *", /month: "foo" is not a value/],
  ])("refuses %j", (expression, message) => {
    expect(() => Schedule.parse(expression)).toThrow(ScheduleError);
    expect(() => Schedule.parse(expression)).toThrow(message);
  });
});

describe("cron schedules in a time zone", () => {
  it("fires at the wall-clock time of the zone, winter and summer", () => {
    expect(firings("0 9 * * *", "2026-01-15T00:00:00Z", 1, "America/New_York")).toEqual(["2026-01-15T14:00:00.000Z"]);
    expect(firings("0 9 * * *", "2026-07-15T00:00:00Z", 1, "America/New_York")).toEqual(["2026-07-15T13:00:00.000Z"]);
    expect(firings("0 9 * * *", "2026-07-15T00:00:00Z", 1, "Asia/Kolkata")).toEqual(["2026-07-15T03:30:00.000Z"]);
  });

  it("moves a set time that a spring-forward skips by the jump, and fires it once", () => {
    // New York, 8 March 2026: 02:00 EST becomes 03:00 EDT; 02:30 does not exist.
    expect(firings("30 2 * * *", "2026-03-08T05:00:00Z", 2, "America/New_York")).toEqual(["2026-03-08T07:30:00.000Z", "2026-03-09T06:30:00.000Z"]);
  });

  it("fires a set time that a fall-back repeats on its first pass only", () => {
    // New York, 1 November 2026: 02:00 EDT becomes 01:00 EST; 01:30 happens twice.
    expect(firings("30 1 * * *", "2026-11-01T04:00:00Z", 2, "America/New_York")).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });

  it("keeps an hourly-or-finer schedule on real time across clock changes", () => {
    // Both passes of the repeated hour fire.
    expect(firings("*/30 * * * *", "2026-11-01T05:00:00Z", 4, "America/New_York")).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
    ]);
    // The skipped hour has no firings; one real hour separates 01:00 EST and 03:00 EDT.
    expect(firings("0 * * * *", "2026-03-08T06:00:00Z", 1, "America/New_York")).toEqual(["2026-03-08T07:00:00.000Z"]);
    expect(firings("* * * * * *", "2026-11-01T05:59:58Z", 3, "America/New_York")).toEqual([
      "2026-11-01T05:59:59.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T06:00:01.000Z",
    ]);
  });

  it("refuses a zone the runtime does not know", () => {
    expect(() => Schedule.parse("* * * * *", "Mars/Olympus_Mons")).toThrow(/unknown time zone "Mars\/Olympus_Mons"/);
  });
});
