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

/** A thrown value as the `{error, message}` pair runs and streams report. */
export function describeError(error: unknown): { error: string; message: string } {
  if (error instanceof Error || (error && typeof error === "object" && "message" in error)) {
    const e = error as Error;
    return { error: e.name || e.constructor?.name || "Error", message: String(e.message) };
  }
  return { error: "Error", message: String(error) };
}
