// @ts-check
// PGlite's own bytea codec writes each byte as its own string and parses bytea[] one
// character at a time; these replace it with bytea-text.mjs's, falling back to its own.
import { byteaArrayText, byteaText, parseByteaArrayText, parseByteaText } from "./bytea-text.mjs";

const BYTEA = 17;
const BYTEA_ARRAY = 1001;

/**
 * Installs the native codecs on an open PGlite. Its array codecs are built when it
 * opens (one per array type), so this replaces both the element's and bytea[]'s after.
 */
export function useNativeBytea(pg) {
  const own = {
    serialize: pg.serializers[BYTEA],
    parse: pg.parsers[BYTEA],
    serializeArray: pg.serializers[BYTEA_ARRAY],
    parseArray: pg.parsers[BYTEA_ARRAY],
  };
  pg.serializers[BYTEA] = (value) => (value instanceof Uint8Array ? byteaText(value) : own.serialize(value));
  pg.parsers[BYTEA] = (text, type) => parseByteaText(text) ?? own.parse(text, type);
  pg.serializers[BYTEA_ARRAY] = (value) => byteaArrayText(value) ?? own.serializeArray(value);
  pg.parsers[BYTEA_ARRAY] = (text, type) => parseByteaArrayText(text) ?? own.parseArray(text, type);
}
