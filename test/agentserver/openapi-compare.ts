/**
 * Compares our agent server's OpenAPI document with the vendor's, operation by
 * operation. Only what a client can observe is checked: the operation exists
 * (same method, same path with the same parameter names), it answers the same
 * success status, and its success body declares every property the vendor's
 * marks required. Fastify serialises responses through the declared schema and
 * drops undeclared properties, so a property missing from our schema is usually
 * missing on the wire too.
 */

type Json = Record<string, unknown>;
export interface OpenApiDocument {
  paths?: Record<string, Record<string, unknown>>;
  components?: Json;
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

/** Vendor surfaces that are planned for later milestones. */
const OUT_OF_SCOPE: RegExp[] = [/^\/threads\/\{thread_id\}\/stream\/events$/, /^\/threads\/\{thread_id\}\/commands$/];

export function inScope(path: string): boolean {
  return !OUT_OF_SCOPE.some((pattern) => pattern.test(path));
}

export interface Operation {
  method: string;
  path: string;
  /** The path with parameter names blanked, so /x/{id} and /x/{other} collide. */
  shape: string;
  responses: Record<string, Json>;
}

export function listOperations(doc: OpenApiDocument): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const shape = path.replace(/\{[^}]+\}/g, "{}").replace(/\/$/, "") || "/";
      found.push({ method: method.toUpperCase(), path, shape, responses: (op.responses ?? {}) as Record<string, Json> });
    }
  }
  return found;
}

/** "2XX" ranges count as their lowest code. */
const statusNumber = (code: string | undefined) => (code === undefined ? undefined : Number(code.replace(/XX$/i, "00")));

/** The lowest 2xx status an operation documents ("2XX" counts as 200). */
export function successStatus(op: Operation): string | undefined {
  const codes = Object.keys(op.responses)
    .map((code) => ({ code, n: statusNumber(code)! }))
    .filter(({ n }) => n >= 200 && n < 300)
    .sort((a, b) => a.n - b.n);
  return codes[0]?.code;
}

/** The body schema of a response: JSON if offered, else the first media type. */
function bodySchema(doc: OpenApiDocument, response: Json | undefined): Json | undefined {
  const resolved = response && resolve(doc, response);
  const content = resolved?.content as Record<string, Json> | undefined;
  if (!content) return undefined;
  const media = content["application/json"] ?? Object.values(content)[0];
  return media?.schema as Json | undefined;
}

/** Follows local `$ref`s (JSON pointers into the same document). */
export function resolve(doc: OpenApiDocument, schema: Json, seen = new Set<string>()): Json {
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return schema;
  if (seen.has(ref)) return {};
  seen.add(ref);
  let target: unknown = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    target = (target as Json | undefined)?.[key];
  }
  if (!target || typeof target !== "object") throw new Error(`unresolvable $ref ${ref}`);
  return resolve(doc, target as Json, seen);
}

const isNullSchema = (s: Json) => s.type === "null";

function variants(doc: OpenApiDocument, schema: Json): Json[] | undefined {
  const list = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  return list?.map((s) => resolve(doc, s)).filter((s) => !isNullSchema(s));
}

/**
 * Properties a body is guaranteed to carry per the vendor: allOf parts add up;
 * for anyOf/oneOf only what every (non-null) variant requires is guaranteed.
 */
export function requiredProperties(doc: OpenApiDocument, raw: Json, depth = 0): Set<string> {
  const schema = resolve(doc, raw);
  const result = new Set<string>((schema.required as string[] | undefined) ?? []);
  if (depth > 4) return result;
  for (const part of (schema.allOf as Json[] | undefined) ?? []) {
    for (const name of requiredProperties(doc, part, depth + 1)) result.add(name);
  }
  const alternatives = variants(doc, schema);
  if (alternatives?.length) {
    const sets = alternatives.map((s) => requiredProperties(doc, s, depth + 1));
    for (const name of sets[0]) if (sets.every((set) => set.has(name))) result.add(name);
  }
  return result;
}

/**
 * Properties our schema declares: allOf parts add up; for anyOf/oneOf a property
 * counts only if every (non-null) variant declares it, since any may be sent.
 */
export function declaredProperties(doc: OpenApiDocument, raw: Json, depth = 0): Set<string> {
  const schema = resolve(doc, raw);
  const result = new Set<string>(Object.keys((schema.properties as Json | undefined) ?? {}));
  if (depth > 4) return result;
  for (const part of (schema.allOf as Json[] | undefined) ?? []) {
    for (const name of declaredProperties(doc, part, depth + 1)) result.add(name);
  }
  const alternatives = variants(doc, schema);
  if (alternatives?.length) {
    const sets = alternatives.map((s) => declaredProperties(doc, s, depth + 1));
    for (const name of sets[0]) if (sets.every((set) => set.has(name))) result.add(name);
  }
  return result;
}

/** The element schema when a body is an array (after $ref and nullable anyOf). */
function arrayItems(doc: OpenApiDocument, raw: Json): Json | undefined {
  const schema = resolve(doc, raw);
  if (schema.items && typeof schema.items === "object") return schema.items as Json;
  const alternatives = variants(doc, schema);
  if (alternatives?.length === 1) return arrayItems(doc, alternatives[0]);
  return undefined;
}

function compareBodies(vendor: OpenApiDocument, ours: OpenApiDocument, theirs: Json | undefined, mine: Json | undefined, where: string): string[] {
  if (!theirs) return [];
  const theirItems = arrayItems(vendor, theirs);
  if (theirItems) {
    const myItems = mine && arrayItems(ours, mine);
    if (!myItems) return requiredProperties(vendor, theirItems).size ? [`${where}: vendor returns an array, ours does not declare one`] : [];
    return compareBodies(vendor, ours, theirItems, myItems, `${where} items`);
  }
  const required = requiredProperties(vendor, theirs);
  if (required.size === 0) return [];
  const declared = mine ? declaredProperties(ours, mine) : new Set<string>();
  const missing = [...required].filter((name) => !declared.has(name));
  return missing.length ? [`${where}: missing required ${missing.join(", ")}`] : [];
}

/** Every difference, one readable line each; empty when ours honours the vendor's contract. */
export function compareDocuments(vendor: OpenApiDocument, ours: OpenApiDocument): string[] {
  const mismatches: string[] = [];
  const mine = new Map(listOperations(ours).map((op) => [`${op.method} ${op.shape}`, op]));
  for (const theirs of listOperations(vendor)) {
    if (!inScope(theirs.path)) continue;
    const label = `${theirs.method} ${theirs.path}`;
    const op = mine.get(`${theirs.method} ${theirs.shape}`);
    if (!op) {
      mismatches.push(`${label}: not served`);
      continue;
    }
    if (op.path.replace(/\/$/, "") !== theirs.path.replace(/\/$/, "")) {
      mismatches.push(`${label}: path parameters named differently (ours ${op.path})`);
    }
    const theirStatus = successStatus(theirs);
    const myStatus = successStatus(op);
    if (statusNumber(theirStatus) !== statusNumber(myStatus)) {
      mismatches.push(`${label}: success status ${myStatus ?? "none documented"}, vendor ${theirStatus}`);
      continue;
    }
    if (!theirStatus || !myStatus) continue;
    const theirBody = bodySchema(vendor, theirs.responses[theirStatus]);
    const myBody = bodySchema(ours, op.responses[myStatus]);
    mismatches.push(...compareBodies(vendor, ours, theirBody, myBody, `${label} ${theirStatus} body`));
  }
  return mismatches;
}
