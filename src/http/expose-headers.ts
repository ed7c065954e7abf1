/**
 * `Access-Control-Expose-Headers` with `names` added to what is already listed, without
 * repeating any (names compare case-insensitively). Several layers add to this list
 * (the rate limiter, CORS, SSE replies), so each must add, never replace. A "*" already
 * there is not enough: it means nothing on credentialed requests.
 */
export function withExposed(existing: string | number | string[] | undefined, names: readonly string[]): string {
  if (existing === undefined || existing === "") return names.join(", ");
  const listed = String(existing).split(",").map((name) => name.trim()).filter(Boolean);
  const lower = new Set(listed.map((name) => name.toLowerCase()));
  for (const name of names) {
    if (lower.has(name.toLowerCase())) continue;
    listed.push(name);
    lower.add(name.toLowerCase());
  }
  return listed.join(", ");
}
