import { describe, expect, it } from "vitest";
import { isStorableDateTime, parseDateTime } from "./date-time.ts";

describe("date-time input", () => {
  it.each([
    ["2025-01-31T12:00:00Z", "2025-01-31T12:00:00.000Z"],
    ["2025-01-31t12:00:00.123456789z", "2025-01-31T12:00:00.123Z"],
    ["2025-01-31 12:00:00+05:30", "2025-01-31T06:30:00.000Z"],
    ["2025-01-31T12:00:00-0100", "2025-01-31T13:00:00.000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
    ["0100-01-01T00:00:00Z", "0100-01-01T00:00:00.000Z"],
    ["0100-01-01T00:30:00+00:30", "0100-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["9999-12-31T23:59:59+01:00", "9999-12-31T22:59:59.000Z"],
  ])("accepts %s as %s", (text, iso) => {
    expect(new Date(parseDateTime(text)!).toISOString()).toBe(iso);
  });

  it.each([
    ["0000-01-01T00:00:00Z", "year 0: PostgreSQL has none"],
    ["0001-01-01T00:00:00+01:00", "before year 1 in UTC"],
    ["0099-12-31T23:59:59.999Z", "before year 100 (PGlite reads it back as 1999)"],
    ["0100-01-01T00:00:00+00:01", "before year 100 in UTC"],
    ["9999-12-31T23:59:59-00:01", "after 9999 in UTC"],
    ["2016-12-31T23:59:60Z", "a leap second"],
    ["2021-02-29T00:00:00Z", "no such day"],
    ["2021-13-01T00:00:00Z", "no such month"],
    ["2021-01-01T24:00:00Z", "hour 24"],
    ["2021-01-01T00:00:00+24:00", "offset of a day"],
    ["2021-01-01T00:00:00+01", "offset without minutes"],
    ["2021-01-01T00:00:00", "no offset"],
    ["2021-01-01", "a date alone"],
    ["+010000-01-01T00:00:00Z", "an extended year"],
    ["-000001-01-01T00:00:00Z", "a negative year"],
    ["1e400", "not a date"],
  ])("refuses %s (%s)", (text) => {
    expect(isStorableDateTime(text)).toBe(false);
  });
});
