// @ts-check
// Errors of the embedded database, made fit to cross from its thread: plain fields, a readable message.

/**
 * Errors of PGlite's WebAssembly filesystem carry only a WASI errno (no message); these
 * are the ones a data directory meets.
 */
const WASI_ERRNO = {
  2: "EACCES: permission denied",
  20: "EEXIST: file exists",
  31: "EISDIR: is a directory",
  44: "ENOENT: no such file or directory",
  51: "ENOSPC: no space left on device",
  54: "ENOTDIR: not a directory",
  63: "EPERM: operation not permitted",
  69: "EROFS: read-only file system",
};

/** A readable message for anything thrown, never "[object Object]". */
export function messageOf(error) {
  const e = /** @type {Record<string, unknown>} */ (error ?? {});
  if (typeof e.message === "string" && e.message) return e.message;
  if (typeof e.errno === "number") {
    const known = WASI_ERRNO[/** @type {keyof typeof WASI_ERRNO} */ (e.errno)];
    return `filesystem error ${known ?? `errno ${e.errno}`}`;
  }
  if (typeof error !== "object" || error === null) return String(error);
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Errors cross threads as plain fields: PostgreSQL's code, detail and so on survive. */
export function plainError(error) {
  const e = /** @type {Record<string, unknown>} */ (error ?? {});
  return {
    message: messageOf(error),
    name: e.name,
    code: e.code,
    detail: e.detail,
    hint: e.hint,
    constraint: e.constraint,
    table: e.table,
    column: e.column,
    schema: e.schema,
    severity: e.severity,
  };
}
