import { invalidField } from "../../http/errors.ts";

/**
 * Turns a search filter on top-level value fields into SQL conditions over
 * `value` (a json column, read as jsonb). `{field: x}` is equality; `{field: {$op: x, ...}}` applies the
 * operators $eq $ne $gt $gte $lt $lte, all of which must hold. Anything else
 * that looks like an operator is refused rather than silently matched as data.
 */
const RANGE = { $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" } as const;
type RangeOperator = keyof typeof RANGE;
const OPERATORS = new Set(["$eq", "$ne", ...Object.keys(RANGE)]);

/** `param(value)` registers a query parameter and returns its placeholder (`$n`). */
export function compileFilter(filter: unknown, param: (value: unknown) => string): string[] {
  if (filter === undefined || filter === null) return [];
  if (!isPlainObject(filter)) throw invalidField(["filter"], "must be an object");
  const conditions: string[] = [];
  for (const [field, expected] of Object.entries(filter)) {
    if (expected === undefined) continue;
    const column = `(value::jsonb -> ${param(field)})`;
    if (!isOperatorObject(expected)) {
      conditions.push(`${column} = ${param(JSON.stringify(expected))}::jsonb`);
      continue;
    }
    for (const [operator, operand] of Object.entries(expected)) {
      if (!OPERATORS.has(operator)) {
        throw invalidField(["filter", field, operator], "unsupported operator; use $eq, $ne, $gt, $gte, $lt or $lte");
      }
      conditions.push(operatorCondition(column, [field, operator], operator, operand, param));
    }
  }
  return conditions;
}

function operatorCondition(column: string, loc: string[], operator: string, operand: unknown, param: (value: unknown) => string): string {
  if (operand === undefined) throw invalidField(["filter", ...loc], "needs a value");
  const value = `${param(JSON.stringify(operand))}::jsonb`;
  if (operator === "$eq") return `${column} = ${value}`;
  // A missing field is "not equal" too, as in the in-memory store.
  if (operator === "$ne") return `${column} IS DISTINCT FROM ${value}`;
  const kind = typeof operand;
  if (kind !== "number" && kind !== "string") throw invalidField(["filter", ...loc], "expects a number or a string");
  // jsonb orders values of different types by type (numbers above strings), so the
  // type check keeps `{age: {$lt: 5}}` from matching `"age": "old"`.
  return `(jsonb_typeof(${column}) = '${kind}' AND ${column} ${RANGE[operator as RangeOperator]} ${value})`;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith("$"));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
