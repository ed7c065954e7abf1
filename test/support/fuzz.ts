/**
 * A small, seeded fuzzer for both servers: hostile values (NUL, lone surrogates, huge
 * numbers, deep nesting, megabyte strings, path traversal, wrong types) put into each
 * field of each operation of a server's own /openapi.json, one field at a time, the
 * rest of the request left plausible. The suites assert that no answer is a 5xx.
 */

/** mulberry32: a tiny seeded generator, so that every run sends the same requests. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One hostile value: its JSON text (for bodies) and its URL form (already percent-encoded). */
export interface Hostile {
  name: string;
  json: string;
  url: string;
}

/** Letters that do not compress: a megabyte of them cannot hide in a TOASTed index entry. */
function noise(random: () => number, length: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  let out = "";
  for (let i = 0; i < length; i++) out += letters[Math.floor(random() * letters.length)];
  return out;
}

export function hostileCorpus(random: () => number): Hostile[] {
  const deep = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
  // URLs stay under Node's 16 KiB header limit, so that these reach the app.
  const urlNoise = noise(random, 8 * 1024);
  return [
    { name: "nul", json: JSON.stringify("a\u0000b"), url: "a%00b" },
    { name: "nul only", json: JSON.stringify("\u0000"), url: "%00" },
    { name: "lone high surrogate", json: '"\\ud800"', url: "%ED%A0%80" },
    { name: "lone low surrogate", json: '"x\\udfffy"', url: "x%ED%BF%BFy" },
    { name: "nul key", json: '{"k\\u0000": 1}', url: "%7B%22k%5Cu0000%22%3A1%7D" },
    { name: "surrogate in object", json: '{"a": "\\ud800"}', url: "%7B%22a%22%3A%22%5Cud800%22%7D" },
    { name: "beyond bigint", json: "99999999999999999999", url: "99999999999999999999" },
    { name: "1e20", json: "1e20", url: "1e20" },
    { name: "bigint + 1", json: "9223372036854775808", url: "9223372036854775808" },
    { name: "1e308", json: "1e308", url: "1e308" },
    { name: "overflows to Infinity", json: "1e400", url: "1e400" },
    { name: "-1", json: "-1", url: "-1" },
    { name: "fraction", json: "1.5", url: "1.5" },
    { name: "deep object", json: deep(10_000), url: "%5B".repeat(4000) },
    { name: "deep array", json: "[".repeat(10_000) + "]".repeat(10_000), url: "%7B".repeat(4000) },
    { name: "1 MB string", json: JSON.stringify(noise(random, 1024 * 1024)), url: urlNoise },
    { name: "path traversal", json: JSON.stringify("../../../etc/passwd"), url: "..%2F..%2F..%2Fetc%2Fpasswd" },
    { name: "true", json: "true", url: "true" },
    { name: "empty object", json: "{}", url: "%7B%7D" },
    { name: "empty list", json: "[]", url: "%5B%5D" },
    { name: "null", json: "null", url: "null" },
    { name: "empty string", json: '""', url: "" },
  ];
}

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: { name: string; required: boolean; schema: Schema }[];
  /** The JSON body's schema (refs resolved at the top), if the operation takes one. */
  body?: Schema;
}

/** Every operation of an OpenAPI document, in document order. */
export function operationsOf(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const params: Schema[] = op.parameters ?? [];
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, required: !!p.required, schema: p.schema ?? {} })),
        body: bodySchema ? resolve(doc, bodySchema) : undefined,
      });
    }
  }
  return out;
}

function resolve(doc: Schema, schema: Schema): Schema {
  let current = schema;
  for (let hops = 0; current?.$ref && hops < 10; hops++) {
    const name = String(current.$ref).split("/").pop()!;
    current = doc.components?.schemas?.[name] ?? {};
  }
  return current ?? {};
}

/**
 * A plausible value for `schema`: its default, its first enum value or non-null
 * branch, or the simplest value of its type; `known` overrides by property name
 * (real ids, graph names) so that requests get past the obvious checks.
 */
export function plausible(doc: Schema, schema: Schema, known: Record<string, unknown> = {}): unknown {
  const s = resolve(doc, schema);
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const branches: Schema[] | undefined = s.anyOf ?? s.oneOf;
  if (branches) {
    const branch = branches.find((b) => resolve(doc, b).type !== "null") ?? branches[0];
    return plausible(doc, branch, known);
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "string":
      if (s.format === "uuid") return crypto.randomUUID();
      if (s.format === "date-time") return new Date().toISOString();
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
    case undefined: {
      if (type === undefined && !s.properties) return {};
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = name in known ? known[name] : plausible(doc, s.properties?.[name] ?? {}, known);
      return out;
    }
    default:
      return null;
  }
}

/** Where a hostile value goes: a path or query parameter, a top-level body field, or the whole body (name ""). */
export interface Target {
  where: "path" | "query" | "body";
  name: string;
}

export function targetsOf(op: Operation): Target[] {
  const targets: Target[] = op.pathParams.map((name) => ({ where: "path", name }));
  for (const q of op.query) targets.push({ where: "query", name: q.name });
  if (op.body || ["POST", "PUT", "PATCH"].includes(op.method)) {
    targets.push({ where: "body", name: "" });
    for (const name of Object.keys(op.body?.properties ?? {})) targets.push({ where: "body", name });
  }
  return targets;
}

export interface FuzzRequest {
  method: string;
  url: string;
  body?: string;
  label: string;
}

const SLOT = "@@hostile@@";

/**
 * The request that puts `value` at `target` of `op`: path parameters from `pathValues`,
 * required query parameters and body fields plausible (`known` first), and the
 * hostile JSON spliced into the body text as it is (a 10,000-deep value cannot go
 * through JSON.stringify).
 */
export function buildRequest(
  doc: Schema,
  op: Operation,
  target: Target,
  value: Hostile,
  pathValues: Record<string, string>,
  known: Record<string, unknown>,
): FuzzRequest {
  let path = op.path;
  for (const name of op.pathParams) {
    const replacement = target.where === "path" && target.name === name ? value.url : encodeURIComponent(pathValues[name] ?? crypto.randomUUID());
    path = path.replace(`{${name}}`, replacement);
  }
  const query: string[] = [];
  for (const q of op.query) {
    if (target.where === "query" && target.name === q.name) query.push(`${q.name}=${value.url}`);
    else if (q.required) query.push(`${q.name}=${encodeURIComponent(String(known[q.name] ?? plausible(doc, q.schema, known)))}`);
  }
  const url = path + (query.length ? `?${query.join("&")}` : "");
  let body: string | undefined;
  if (target.where === "body") {
    if (target.name === "") body = value.json;
    else {
      const base = (op.body ? plausible(doc, op.body, known) : {}) as Record<string, unknown>;
      base[target.name] = SLOT;
      body = JSON.stringify(base).replace(JSON.stringify(SLOT), value.json);
    }
  } else if (op.body) {
    body = JSON.stringify(plausible(doc, op.body, known));
  }
  const where = target.where === "body" && target.name === "" ? "body" : `${target.where}.${target.name}`;
  return { method: op.method, url, body, label: `${op.method} ${op.path} ${where} = ${value.name}` };
}

/** `count` distinct picks from `items`, by the seeded generator. */
export function pick<T>(random: () => number, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
  return out;
}

/**
 * Sends one request and answers its status and the start of its body. Event streams
 * are not read (a thread's stream never ends); other answers are read in full.
 */
export async function send(base: string, request: FuzzRequest, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 20_000);
  try {
    const response = await fetch(base + request.url, {
      method: request.method,
      headers: { ...headers, ...(request.body === undefined ? {} : { "content-type": "application/json" }) },
      body: request.body,
      signal: abort.signal,
    });
    if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      abort.abort();
      return { status: response.status, text: "" };
    }
    return { status: response.status, text: (await response.text()).slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
}
