// @ts-check
// bytea and bytea[] in PostgreSQL's text format, through Buffer's native hex. Both of
// our drivers read results as text: node-postgres parses bytea[] one character at a
// time (3.3 ms for two 20 KB blobs here), and PGlite also writes and reads every byte
// as its own string. Checkpoint blobs travel as bytea[] (put_batch, checkpoint_tuple),
// so on a thread of 100 messages those codecs cost more than the database. Each
// function answers undefined for a text it does not expect, and the caller then uses
// its driver's own codec.

const HEX = /^[0-9a-f]*$/;

/** `\x0a0b` from bytes. */
export function byteaText(bytes) {
  return `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
}

/** Bytes from hex digits, in an ArrayBuffer of their own (they may cross threads by copy). */
function bytesOf(hex) {
  const bytes = new Uint8Array(hex.length >>> 1);
  Buffer.from(bytes.buffer).write(hex, "hex");
  return bytes;
}

/** The bytes of a hex-format bytea (`\x0a0b`). */
export function parseByteaText(text) {
  return text.startsWith("\\x") && HEX.test(text.slice(2)) ? bytesOf(text.slice(2)) : undefined;
}

/**
 * A one-dimensional bytea[] of hex-format values or nulls: `{"\\x0a0b",NULL}`. Hex digits
 * hold no comma or quote, so the elements split on commas.
 */
export function parseByteaArrayText(text) {
  if (text === "{}") return [];
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  const parts = text.slice(1, -1).split(",");
  const out = new Array(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === "NULL") out[i] = null;
    else if (part.startsWith('"\\\\x') && part.endsWith('"') && HEX.test(part.slice(4, -1))) out[i] = bytesOf(part.slice(4, -1));
    else return undefined;
  }
  return out;
}

/** A bytea[] parameter of byte strings or nulls; undefined for anything else. */
export function byteaArrayText(values) {
  if (!Array.isArray(values) || !values.every((e) => e == null || e instanceof Uint8Array)) return undefined;
  return `{${values.map((e) => (e == null ? "NULL" : `"\\${byteaText(e)}"`)).join(",")}}`;
}
