/**
 * The one rule for date-time input on both servers: the `date-time` format of every
 * request schema (validator.ts) is this function, so a date the database cannot store
 * is a 422 naming its field, never a 500 from PostgreSQL or from `Date.toISOString`.
 *
 * Accepted: RFC 3339 `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`, with `t`/`z` in
 * either case, a space for the `T` and `±hhmm` tolerated (what JavaScript, Python and
 * PostgreSQL all read the same way), whose instant lies in years 0100 to 9999 UTC.
 *
 * Why that range: PostgreSQL's timestamptz holds 4713 BC to 294276 AD, JavaScript's
 * Date ±275760 years, but what this code writes is `Date.toISOString()`, which turns
 * into `0000-...` (PostgreSQL has no year 0: "date/time field value out of range")
 * before year 1 and `+010000-...` (refused too) after 9999; RFC 3339's four-digit year
 * reaches past either only through an offset. Years 1 to 99 are stored right but the
 * embedded back end (PGlite) reads them back as 19xx or 20xx, so a cron's end_time
 * would change under its owner: the range starts at year 100, where both back ends
 * give back what was stored.
 * A leap second (`23:59:60`) is refused as well: JavaScript cannot read it, nor can
 * Python's datetime, which is what the vendor's server would use.
 */
export const DATE_TIME_RANGE = { first: "0100-01-01T00:00:00Z", last: "9999-12-31T23:59:59.999Z" } as const;

const FIRST_MS = Date.parse(DATE_TIME_RANGE.first);
const LAST_MS = Date.parse(DATE_TIME_RANGE.last);
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/** What a client is told when `isStorableDateTime` refuses its value. */
export const DATE_TIME_MESSAGE = `Input should be an RFC 3339 date-time (such as 2025-01-31T12:00:00Z) between ${DATE_TIME_RANGE.first} and ${DATE_TIME_RANGE.last}`;

/** The instant `text` names in milliseconds, or undefined when it is not an accepted date-time. */
export function parseDateTime(text: string): number | undefined {
  const parts = SHAPE.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = parts[10] === undefined ? 0 : Number(parts[10]);
  const offsetMinutes = parts[11] === undefined ? 0 : Number(parts[11]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = parts[9] === "-" ? -1 : 1;
  const millis = Number((parts[7] ?? "").padEnd(3, "0").slice(0, 3));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const utc = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  utc.setUTCFullYear(year);
  const instant = utc.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (!(instant >= FIRST_MS && instant <= LAST_MS)) return undefined;
  // Services read the text with `new Date(text)`: it must agree.
  return Date.parse(text) === instant ? instant : undefined;
}

/** True for a date-time both servers accept (see the module comment). */
export function isStorableDateTime(text: string): boolean {
  return parseDateTime(text) !== undefined;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
