/**
 * JSON text for a jsonb value. PostgreSQL's jsonb cannot hold the NUL character, so the
 * `\u0000` escapes that JSON.stringify writes for it are dropped, in strings and keys
 * alike. An escaped backslash followed by "u0000" is plain text and stays.
 */
export function withoutNul(json: string): string {
  return json.includes("\\u0000") ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1") : json;
}

/**
 * `JSON.stringify(value)` fit for a jsonb parameter, or a json column that SQL casts to
 * jsonb (decision 0031), undefined staying undefined. Keys keep their order.
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  return (text === undefined ? text : withoutNul(text)) as string;
}
