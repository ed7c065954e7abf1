// @ts-check
// PGlite puts a package of read-only files (time zones, ICU collation data, text search
// dictionaries: 6 MB) in every instance's file system, as views on one buffer that the
// instance loads for itself. The databases of one thread (decision 0057) share that buffer
// here instead of holding a copy each (decision 0059).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** @type {Promise<ArrayBuffer> | undefined} */
let loaded;

/** The package, as PGlite's `fsBundle` option takes it (it only asks for its bytes). */
export function sharedPackageFiles() {
  loaded ??= readFile(join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "pglite.data")).then((bytes) =>
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  );
  const files = loaded;
  return /** @type {Blob} */ (/** @type {unknown} */ ({ arrayBuffer: () => files }));
}
