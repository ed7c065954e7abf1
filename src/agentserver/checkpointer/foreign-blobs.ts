import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * A checkpoint value serialized by another language's LangGraph (a Python graph's worker,
 * decision 0036): stored and handed back as it came, never decoded here. Its type tag
 * starts with the language's prefix, so a JS graph meeting it can tell.
 */
export class ForeignBlob {
  constructor(
    readonly type: string,
    readonly bytes: Uint8Array,
  ) {}
}

/** Type tags of values the Python worker serialized. */
export const PYTHON_BLOB_PREFIX = "py:";

/** The saver's serializer, passing foreign blobs through untouched in both directions. */
export function withForeignBlobs(inner: SerializerProtocol): SerializerProtocol {
  return {
    async dumpsTyped(value: unknown) {
      if (value instanceof ForeignBlob) return [value.type, value.bytes];
      return inner.dumpsTyped(value);
    },
    async loadsTyped(type: string, data: Uint8Array | string) {
      if (type.startsWith(PYTHON_BLOB_PREFIX)) return new ForeignBlob(type, typeof data === "string" ? new TextEncoder().encode(data) : data);
      return inner.loadsTyped(type, data);
    },
  };
}
