/**
 * Wall-clock time in an IANA time zone, with the runtime's own zone data (Intl): no
 * library, and the same rules the rest of Node uses. A "wall" value is the local date
 * and time written as if it were UTC (milliseconds since the epoch), so plain UTC
 * arithmetic on it moves along the local calendar.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** Whether the runtime knows this zone (`America/New_York`, `UTC`, `Etc/GMT+5`, ...). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time at `instant` (whole seconds). */
export function wallAt(instant: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatOf(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
}

const HOURS_12 = 12 * 3600_000;

/**
 * The instants, earliest first, whose wall-clock time in `timeZone` is `wall`: one
 * usually, two in the hour a clock change repeats. A time the change skips (it never
 * shows on the clock) is moved forward by the length of the jump (02:30 on a night that
 * goes from 02:00 to 03:00 becomes 03:30). Assumes at most one offset change within
 * twelve hours either side.
 */
export function instantsOf(wall: number, timeZone: string): number[] {
  const offsetBefore = wallAt(wall - HOURS_12, timeZone) - (wall - HOURS_12);
  const offsetAfter = wallAt(wall + HOURS_12, timeZone) - (wall + HOURS_12);
  const found = new Set<number>();
  for (const offset of [offsetBefore, offsetAfter]) {
    const instant = wall - offset;
    if (wallAt(instant, timeZone) === wall) found.add(instant);
  }
  if (found.size === 0) return [wall - offsetBefore];
  return [...found].sort((a, b) => a - b);
}
