/**
 * Converts graph output to plain JSON for the wire. LangChain messages (from any copy
 * of @langchain/core: we only look for a `toDict` method) become message dicts
 * `{type, content, id, ...}`, which is what the SDKs and Studio read.
 */
export function toWire(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key, converted) {
    const raw = this[key];
    if (raw !== null && typeof raw === "object" && typeof (raw as { toDict?: unknown }).toDict === "function") {
      const { type, data } = (raw as { toDict(): { type: string; data: Record<string, unknown> } }).toDict();
      return { ...data, type };
    }
    if (typeof raw === "bigint") return Number(raw);
    return converted;
  });
  return text === undefined ? null : JSON.parse(text);
}

/** A state's values as sent (`raw`) and on the wire, key by key (see `valuesToWire`). */
export interface WireValues {
  raw: Record<string, unknown>;
  wire: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * `toWire` of a state's values, key by key, as JSON would write them: a key whose value
 * is the very object of `known.raw` takes its converted form from `known.wire`. A run's
 * end converts its final values and then the thread's snapshot of them; a thread of 100
 * messages costs about 0.7 ms per conversion. Reuse is for values the graph no longer
 * changes (it has ended): an object changed in place keeps its identity.
 */
export function valuesToWire(values: unknown, known?: WireValues): unknown {
  if (!isPlainObject(values)) return toWire(values);
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
    wire[key] = known && known.raw[key] === value && key in known.wire ? known.wire[key] : toWire(value);
  }
  return wire;
}

/** A thrown value as the `{error, message}` pair runs and streams report. */
export function describeError(error: unknown): { error: string; message: string } {
  if (error instanceof Error || (error && typeof error === "object" && "message" in error)) {
    const e = error as Error;
    return { error: e.name || e.constructor?.name || "Error", message: String(e.message) };
  }
  return { error: "Error", message: String(error) };
}
