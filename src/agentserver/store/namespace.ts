/**
 * Namespaces are lists of labels, stored joined with "." (see 0003_store.sql), so a
 * label may not contain "." and may not be empty (both would make the join ambiguous).
 */
export const SEPARATOR = ".";

/**
 * Size bounds of an item's identity, in UTF-8 bytes. The namespace path and the key
 * together form the primary key of store_items, and a btree entry must fit in about a
 * third of a page (2,704 bytes): 1 KiB each keeps every pair well inside that, where a
 * megabyte key used to fail in PostgreSQL with a 500.
 */
const MAX_NAMESPACE_BYTES = 1024;
const MAX_KEY_BYTES = 1024;

/**
 * Why `namespace` is not acceptable, or null when it is. Writes (`write`) also refuse
 * the root label "langgraph", which LangGraph reserves for itself.
 */
export function namespaceProblem(namespace: unknown, options: { allowEmpty?: boolean; write?: boolean } = {}): string | null {
  if (!Array.isArray(namespace)) return "must be a list of strings";
  if (options.write && namespace[0] === "langgraph") return "the root label 'langgraph' is reserved";
  if (namespace.length === 0 && !options.allowEmpty) return "must not be empty";
  for (const label of namespace) {
    if (typeof label !== "string") return `labels must be strings, got ${typeof label}`;
    if (label === "") return "labels must not be empty strings";
    if (label.includes(SEPARATOR)) return `label '${label}' must not contain periods ('.')`;
    if (label.includes("\0")) return "labels must not contain NUL bytes";
  }
  const bytes = Buffer.byteLength(joinNamespace(namespace as string[]));
  if (bytes > MAX_NAMESPACE_BYTES) return `must be at most ${MAX_NAMESPACE_BYTES} bytes with its labels joined by '.' (got ${bytes})`;
  return null;
}

/** Why `key` is not acceptable as an item key, or null when it is. */
export function keyProblem(key: string): string | null {
  if (key.includes("\0")) return "must not contain NUL bytes";
  const bytes = Buffer.byteLength(key);
  return bytes > MAX_KEY_BYTES ? `must be at most ${MAX_KEY_BYTES} bytes (got ${bytes})` : null;
}

export function joinNamespace(namespace: readonly string[]): string {
  return namespace.join(SEPARATOR);
}

export function splitNamespace(path: string): string[] {
  return path === "" ? [] : path.split(SEPARATOR);
}
