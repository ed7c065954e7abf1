import { parseCronExpression, ScheduleError, type CronExpression } from "./cron-expression.ts";
import { instantsOf, isTimeZone, wallAt } from "./zoned-time.ts";

export { ScheduleError };

/** How far ahead a firing is looked for: a 29 February schedule fires at least every 8 years. */
const HORIZON_YEARS = 9;
/** Clock changes crossed while looking for one firing; a handful at most in practice. */
const MAX_CLOCK_CHANGES = 64;

/**
 * A cron schedule in a time zone (none: UTC, as on the vendor's server): when it fires
 * next. Firings fall on whole seconds.
 *
 * Clock changes follow Vixie cron's rule. A schedule that fires every hour (its hour
 * field is `*`) keeps to real time: in the hour a change repeats it fires in both
 * passes, and nothing of it fires in the hour a change skips (that hour does not exist).
 * A schedule with set hours fires once per wall-clock time: a repeated time fires on
 * its first pass only, and a skipped one is moved forward by the length of the jump.
 */
export class Schedule {
  private constructor(
    private readonly expression: CronExpression,
    readonly timeZone: string | null,
  ) {}

  /** Throws ScheduleError for an expression or zone that cannot be read. */
  static parse(expression: string, timeZone: string | null = null): Schedule {
    if (timeZone !== null && !isTimeZone(timeZone))
      throw new ScheduleError(`unknown time zone ${JSON.stringify(timeZone)}; use an IANA name such as "America/New_York"`);
    return new Schedule(parseCronExpression(expression), timeZone);
  }

  /** The first firing strictly after `after` (epoch ms), or undefined if it never fires again. */
  nextAfter(after: number): number | undefined {
    const start = Math.floor(after / 1000) * 1000 + 1000;
    const zone = this.timeZone;
    if (zone === null) return nextMatch(this.expression, start);
    return this.expression.hours.size === 24 ? this.nextByClock(start, zone) : this.nextByWallTime(start, zone);
  }

  /** The earliest instant from `start` whose wall-clock reading matches. */
  private nextByClock(start: number, zone: string): number | undefined {
    let from = start;
    for (let change = 0; change < MAX_CLOCK_CHANGES; change++) {
      const wall = wallAt(from, zone);
      const match = nextMatch(this.expression, wall);
      if (match === undefined) return undefined;
      // Assume the offset holds until then; if it does not, go on from the change.
      const candidate = from + (match - wall);
      if (wallAt(candidate, zone) === match) return candidate;
      from = firstOffsetChange(from, candidate, zone);
    }
    return undefined;
  }

  /** The next matching wall-clock time, at its first instant from `start`. */
  private nextByWallTime(start: number, zone: string): number | undefined {
    let wall = wallAt(start, zone);
    for (let change = 0; change < MAX_CLOCK_CHANGES; change++) {
      const match = nextMatch(this.expression, wall);
      if (match === undefined) return undefined;
      // An earlier pass of a repeated time may already be behind us.
      const instant = instantsOf(match, zone).find((candidate) => candidate >= start);
      if (instant !== undefined) return instant;
      wall = match + 1000;
    }
    return undefined;
  }
}

/**
 * The first time at or after `from` that the expression matches, read as UTC fields
 * (a UTC instant, or a wall-clock value from zoned-time.ts). Skips whole months, days,
 * hours and minutes that cannot match.
 */
function nextMatch(expression: CronExpression, from: number): number | undefined {
  const date = new Date(from);
  const lastYear = date.getUTCFullYear() + HORIZON_YEARS;
  while (date.getUTCFullYear() <= lastYear) {
    const [year, month, day, hour, minute] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes()];
    if (!expression.months.has(month + 1)) {
      date.setTime(Date.UTC(year, month + 1, 1));
    } else if (!dayMatches(expression, date)) {
      date.setTime(Date.UTC(year, month, day + 1));
    } else if (!expression.hours.has(hour)) {
      date.setTime(Date.UTC(year, month, day, hour + 1));
    } else if (!expression.minutes.has(minute)) {
      date.setTime(Date.UTC(year, month, day, hour, minute + 1));
    } else if (!expression.seconds.has(date.getUTCSeconds())) {
      const second = nextIn(expression.seconds, date.getUTCSeconds(), 59);
      date.setTime(second === undefined ? Date.UTC(year, month, day, hour, minute + 1) : Date.UTC(year, month, day, hour, minute, second));
    } else {
      return date.getTime();
    }
  }
  return undefined;
}

/** The smallest member of `values` above `current`, up to `max`. */
function nextIn(values: ReadonlySet<number>, current: number, max: number): number | undefined {
  for (let value = current + 1; value <= max; value++) if (values.has(value)) return value;
  return undefined;
}

function dayMatches(expression: CronExpression, date: Date): boolean {
  const byMonth = expression.daysOfMonth.has(date.getUTCDate());
  const byWeek = expression.daysOfWeek.has(date.getUTCDay());
  if (expression.anyDayOfMonth) return byWeek;
  if (expression.anyDayOfWeek) return byMonth;
  return byMonth || byWeek;
}

/**
 * The first whole second after `from`, and at most `to`, whose UTC offset differs from
 * `from`'s. The caller knows `to` has another offset (its wall-clock reading is off).
 */
function firstOffsetChange(from: number, to: number, zone: string): number {
  const offset = (instant: number) => wallAt(instant, zone) - instant;
  const initial = offset(from);
  let low = from;
  let high = to;
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (offset(middle) === initial) low = middle;
    else high = middle;
  }
  return high;
}
