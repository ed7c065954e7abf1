import { operands, type AuthFilters } from "../custom-auth/filters.ts";

/**
 * Custom auth's filters on store items, as SQL over `store_items`. The vendor matches a
 * filter against `{...value, namespace, key}`: `namespace` is the item's label list (so
 * only `$contains` can match it), `key` its key, any other name a top-level field of
 * its value. Equality is strict (`"1"` does not match `1`).
 */
export type StoreAuthFilter = AuthFilters;

type Add = (value: unknown) => string;

/** Conditions ANDed to a search; `namespacesOnly` for namespace listing, where items' values do not count. */
export function storeFilterConditions(filter: StoreAuthFilter, add: Add, options: { namespacesOnly?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const [field, expected] of Object.entries(filter)) {
    const { eq, contains } = operands(expected);
    if (field === "namespace") {
      // A list never equals a string; labels are matched one by one.
      if (eq !== undefined) out.push("false");
      if (contains !== undefined) out.push(`string_to_array(namespace_path, '.') @> ${add(contains.map(String))}::text[]`);
    } else if (options.namespacesOnly) {
      // Listing namespaces sees no key and no value: the vendor's match fails for them.
      out.push("false");
    } else if (field === "key") {
      if (eq !== undefined) out.push(typeof eq === "string" ? `key = ${add(eq)}::text` : "false");
      if (contains !== undefined) out.push("false");
    } else {
      const column = `(value::jsonb -> ${add(field)}::text)`;
      if (eq !== undefined) out.push(`${column} = ${add(JSON.stringify(eq))}::jsonb`);
      if (contains !== undefined) out.push(`(jsonb_typeof(${column}) = 'array' AND ${column} @> ${add(JSON.stringify(contains))}::jsonb)`);
    }
  }
  return out;
}
