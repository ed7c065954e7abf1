/**
 * Filters an `on` handler returns: `{field: "x"}` or `{field: {$eq: "x"}}` (the
 * resource's metadata field equals "x"), `{field: {$contains: "x" | ["x", "y"]}}` (the
 * field is a list holding each). Every pair must hold.
 */
export type AuthFilters = Record<string, unknown>;

/** A filter the server cannot apply: a mistake in the project's auth code. */
export class FilterError extends Error {}

/**
 * The operands of one filter value. An unknown operator fails closed (the vendor's server
 * ignores it, which lets every resource through).
 */
export function operands(expected: unknown): { eq?: unknown; contains?: unknown[] } {
  if (typeof expected !== "object" || expected === null) return { eq: expected };
  if (Array.isArray(expected)) throw new FilterError("an auth filter value must be a string, {$eq: ...} or {$contains: ...}, not a list");
  const keys = Object.keys(expected);
  const unknown = keys.filter((k) => k !== "$eq" && k !== "$contains");
  if (unknown.length || keys.length === 0)
    throw new FilterError(`unsupported auth filter operator ${JSON.stringify(unknown[0] ?? "{}")}; use $eq or $contains`);
  const { $eq, $contains } = expected as { $eq?: unknown; $contains?: unknown };
  return {
    ...("$eq" in expected ? { eq: $eq } : {}),
    ...("$contains" in expected ? { contains: Array.isArray($contains) ? $contains : [$contains] } : {}),
  };
}

/** Whether a resource's metadata satisfies the filters (none: everything does). */
export function matches(metadata: Record<string, unknown> | null | undefined, filters: AuthFilters | undefined): boolean {
  if (!filters) return true;
  for (const [field, expected] of Object.entries(filters)) {
    const { eq, contains } = operands(expected);
    const actual = metadata?.[field];
    if (eq !== undefined && !sameJson(actual, eq)) return false;
    if (contains !== undefined && !(Array.isArray(actual) && contains.every((item) => actual.some((a) => sameJson(a, item))))) return false;
  }
  return true;
}

/** A JSON document whose containment (`metadata @> doc`) no row satisfies: a random key. */
const NOTHING = { [`slipway-auth-nothing-${crypto.randomUUID()}`]: true };

/**
 * The filters as one jsonb containment document, merged into `base` (a search's own
 * metadata filter): `metadata @> result` holds exactly when both held. For the scalars
 * filters compare, containment is equality; lists merge as sets. Filters no metadata can
 * satisfy together (two different values for one field) give a document nothing matches.
 */
export function containment(filters: AuthFilters | undefined, base: Record<string, unknown> | null | undefined = {}): Record<string, unknown> {
  let doc: unknown = base ?? {};
  for (const [field, expected] of Object.entries(filters ?? {})) {
    const { eq, contains } = operands(expected);
    if (eq !== undefined) doc = merge(doc, { [field]: eq });
    if (contains !== undefined) doc = merge(doc, { [field]: contains });
    if (doc === undefined) return NOTHING;
  }
  return doc as Record<string, unknown>;
}

/** The document containing both, or undefined when none can (a scalar against another value). */
function merge(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b.filter((item) => !a.some((x) => sameJson(x, item)))];
  if (isObject(a) && isObject(b)) {
    const out: Record<string, unknown> = { ...a };
    for (const [key, value] of Object.entries(b)) {
      if (!(key in out)) out[key] = value;
      else {
        const merged = merge(out[key], value);
        if (merged === undefined) return undefined;
        out[key] = merged;
      }
    }
    return out;
  }
  return sameJson(a, b) ? a : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
