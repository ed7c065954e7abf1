/**
 * Namespaces are lists of labels, stored joined with "." (see 0003_store.sql), so a
 * label may not contain "." and may not be empty (both would make the join ambiguous).
 */
export const SEPARATOR = ".";

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
  return null;
}

export function joinNamespace(namespace: readonly string[]): string {
  return namespace.join(SEPARATOR);
}

export function splitNamespace(path: string): string[] {
  return path === "" ? [] : path.split(SEPARATOR);
}
