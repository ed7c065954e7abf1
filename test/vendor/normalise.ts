/**
 * What differs by nature between two servers answering the same request, replaced by
 * placeholders so that the rest can be compared with toEqual:
 * - ids: each server mints its own thread, run, checkpoint and task ids (the vendor
 *   UUIDv7, ours UUIDv4; task ids are derived from checkpoint ids), in values and in
 *   keys (checkpoint_map, messages/metadata) and inside strings (checkpoint_ns
 *   "child:<id>", message ids "run-<id>");
 * - interrupt ids: a hash of the checkpoint namespace, which holds task ids;
 * - timestamps, and the server's own address (each listens on its own port).
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HASH = /^[0-9a-f]{32}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const LOCAL_URL = /^https?:\/\/127\.0\.0\.1:\d+/;

function text(value: string): string {
  if (TIME.test(value)) return "<time>";
  if (HASH.test(value)) return "<hash>";
  return value.replace(UUID, "<id>").replace(LOCAL_URL, "<url>");
}

export function normalise(value: unknown): unknown {
  if (typeof value === "string") return text(value);
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [text(key), normalise(inner)]));
  }
  return value;
}

/** A copy of `value` without the keys at the given dotted paths ("*" matches any key or index). */
export function without(value: unknown, ...paths: string[]): unknown {
  let result = structuredClone(value);
  for (const path of paths) result = drop(result, path.split("."));
  return result;
}

function drop(value: unknown, path: string[]): unknown {
  if (!value || typeof value !== "object" || path.length === 0) return value;
  const [head, ...rest] = path;
  const record = value as Record<string, unknown>;
  for (const key of head === "*" ? Object.keys(record) : [head!]) {
    if (!(key in record)) continue;
    if (rest.length === 0) delete record[key];
    else record[key] = drop(record[key], rest);
  }
  return value;
}

/** The sorted keys of an object, for comparing shapes whose contents differ by design. */
export const keysOf = (value: unknown): string[] => Object.keys((value ?? {}) as object).sort();

/** A copy of `value` where every object held under the key `parent`, at any depth, lacks `keys`. */
export function omitWithin(value: unknown, parent: string, keys: string[]): unknown {
  const walk = (inner: unknown, under: string | undefined): unknown => {
    if (Array.isArray(inner)) return inner.map((item) => walk(item, undefined));
    if (!inner || typeof inner !== "object") return inner;
    const entries = Object.entries(inner).filter(([key]) => under !== parent || !keys.includes(key));
    return Object.fromEntries(entries.map(([key, item]) => [key, walk(item, key)]));
  };
  return walk(value, undefined);
}
