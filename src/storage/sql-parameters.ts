/** Placeholders for one statement: `add(value)` returns `$n` and keeps the value for `values`. */
export function sqlParameters(): { values: unknown[]; add: (value: unknown) => string } {
  const values: unknown[] = [];
  const add = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  return { values, add };
}
