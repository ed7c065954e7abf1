/**
 * Cron expressions as the vendor's agent server reads them (it uses Python's croniter):
 *
 * - five fields, `minute hour day-of-month month day-of-week`, firing at second 0;
 * - six fields: the same five, then **seconds last** (`* * * * * 30`: second 30 of
 *   every minute). Quartz and node-cron put seconds first; croniter, and so the vendor, does
 *   not, and a client written for the vendor must get the schedule it asked for;
 * - `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`), `@hourly`.
 *
 * Each field is a list of `*`, `n`, `a-b`, each with an optional `/step` (`a/step` runs
 * from a to the field's end). Months and weekdays also take names (`jan`, `mon`);
 * weekday 7 is Sunday, like 0; `?` means `*` in the two day fields. When both day fields
 * are restricted a day matches either (Vixie cron's rule, croniter's default).
 *
 * croniter's extensions `L`, `W`, `#`, `H` and a seventh (year) field are refused with a
 * message rather than read some other way.
 */
export interface CronExpression {
  seconds: ReadonlySet<number>;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 (Sunday) to 6. */
  daysOfWeek: ReadonlySet<number>;
  /** Whether each day field allows every day: decides between "and" and "or". */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

/** A schedule that cannot be read; the message says why. */
export class ScheduleError extends Error {}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Allows `?` (the day fields). */
  question?: boolean;
}

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"] as const;
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;

const SECOND: FieldSpec = { name: "second", min: 0, max: 59 };
const MINUTE: FieldSpec = { name: "minute", min: 0, max: 59 };
const HOUR: FieldSpec = { name: "hour", min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: "day of month", min: 1, max: 31, question: true };
const MONTH: FieldSpec = { name: "month", min: 1, max: 12, names: MONTH_NAMES };
const DAY_OF_WEEK: FieldSpec = { name: "day of week", min: 0, max: 7, names: DAY_NAMES, question: true };

const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export function parseCronExpression(text: string): CronExpression {
  const trimmed = text.trim();
  const expanded = trimmed.startsWith("@") ? MACROS[trimmed.toLowerCase()] : trimmed;
  if (expanded === undefined) throw new ScheduleError(`unknown shorthand ${JSON.stringify(trimmed)}; use one of ${Object.keys(MACROS).join(", ")}`);
  const fields = expanded.split(/\s+/).filter(Boolean);
  if (fields.length === 7) throw new ScheduleError("a seventh (year) field is not supported");
  if (fields.length !== 5 && fields.length !== 6) {
    throw new ScheduleError(`expected 5 fields (minute hour day-of-month month day-of-week) or 6 (the same, then seconds), got ${fields.length}`);
  }
  const [minute, hour, dayOfMonth, month, dayOfWeek, second = "0"] = fields;
  const weekdays = parseField(dayOfWeek, DAY_OF_WEEK);
  // 7 is another name for Sunday.
  if (weekdays.delete(7)) weekdays.add(0);
  const monthDays = parseField(dayOfMonth, DAY_OF_MONTH);
  return {
    seconds: parseField(second, SECOND),
    minutes: parseField(minute, MINUTE),
    hours: parseField(hour, HOUR),
    daysOfMonth: monthDays,
    months: parseField(month, MONTH),
    daysOfWeek: weekdays,
    anyDayOfMonth: monthDays.size === 31,
    anyDayOfWeek: weekdays.size === 7,
  };
}

function parseField(text: string, spec: FieldSpec): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    if (item === "") throw new ScheduleError(`${spec.name}: empty list item in ${JSON.stringify(text)}`);
    for (const value of parseItem(item, spec)) values.add(value);
  }
  return values;
}

function parseItem(item: string, spec: FieldSpec): number[] {
  const unsupported = /[LW#H]/i.exec(item.replace(/[a-z]{3}/gi, (name) => (isName(name, spec) ? "" : name)));
  if (unsupported) throw new ScheduleError(`${spec.name}: "${unsupported[0]}" (in ${JSON.stringify(item)}) is not supported`);
  const [range, stepText, extra] = item.split("/");
  if (extra !== undefined) throw new ScheduleError(`${spec.name}: ${JSON.stringify(item)} has more than one "/"`);
  const step = stepText === undefined ? 1 : parseNumber(stepText, spec, { step: true });
  let low: number;
  let high: number;
  if (range === "*" || (range === "?" && spec.question)) {
    [low, high] = [spec.min, spec.max === 7 ? 6 : spec.max];
  } else if (range.includes("-")) {
    const [from, to, more] = range.split("-");
    if (more !== undefined) throw new ScheduleError(`${spec.name}: ${JSON.stringify(item)} is not a range`);
    [low, high] = [parseValue(from, spec), parseValue(to, spec)];
    if (low > high) throw new ScheduleError(`${spec.name}: range ${JSON.stringify(range)} runs backwards`);
  } else {
    low = parseValue(range, spec);
    // `a/step` runs to the end of the field; a bare value is just itself.
    high = stepText === undefined ? low : spec.max;
  }
  const values: number[] = [];
  for (let value = low; value <= high; value += step) values.push(value);
  return values;
}

function isName(text: string, spec: FieldSpec): boolean {
  return spec.names?.includes(text.toLowerCase()) ?? false;
}

function parseValue(text: string, spec: FieldSpec): number {
  if (spec.names && isName(text, spec)) {
    const index = spec.names.indexOf(text.toLowerCase());
    return spec === MONTH ? index + 1 : index;
  }
  return parseNumber(text, spec, { step: false });
}

function parseNumber(text: string, spec: FieldSpec, options: { step: boolean }): number {
  if (!/^\d{1,2}$/.test(text)) throw new ScheduleError(`${spec.name}: ${JSON.stringify(text)} is not a ${options.step ? "step" : "value"}`);
  const value = Number(text);
  if (options.step) {
    if (value < 1) throw new ScheduleError(`${spec.name}: a step must be at least 1`);
    return value;
  }
  if (value < spec.min || value > spec.max) throw new ScheduleError(`${spec.name}: ${value} is outside ${spec.min}-${spec.max}`);
  return value;
}
