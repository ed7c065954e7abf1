import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The vendor's OpenAPI documents the contract tests compare ours with. The source of truth
 * is shared/reference/ beside the repository; a clone on its own (CI, a contributor) has
 * instead the committed extract in test/fixtures/vendor-contract/: the same paths,
 * methods, statuses and schema structure, without the vendor's prose (descriptions,
 * titles, examples), which is all the tests read. `npm run vendor-contract` rewrites the
 * extract from shared/reference/.
 */
export type VendorDocumentName = "agent-server" | "control-plane";

const REFERENCE = (name: VendorDocumentName) => fileURLToPath(new URL(`../../../shared/reference/${name}-openapi.json`, import.meta.url));
const EXTRACT = (name: VendorDocumentName) => fileURLToPath(new URL(`../fixtures/vendor-contract/${name}.json`, import.meta.url));

/** Keys that only annotate: prose and presentation, never part of the wire contract. */
const ANNOTATIONS = new Set(["description", "title", "summary", "example", "examples", "externalDocs", "operationId", "tags", "x-tagGroups"]);

/** The structure of an OpenAPI document: everything but annotations (and request parts). */
export function extractContract(document: Record<string, unknown>): Record<string, unknown> {
  const info = document.info as { version?: unknown } | undefined;
  return {
    openapi: document.openapi,
    info: { version: info?.version },
    paths: strip(pathsWithoutRequests(document.paths as Record<string, Record<string, Record<string, unknown>>>)),
    components: strip(document.components),
  };
}

/** Operations keep their responses only: the tests compare what servers answer. */
function pathsWithoutRequests(paths: Record<string, Record<string, Record<string, unknown>>>): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [path, item] of Object.entries(paths ?? {})) {
    out[path] = {};
    for (const [method, operation] of Object.entries(item)) {
      if (operation && typeof operation === "object" && "responses" in operation) out[path][method] = { responses: operation.responses };
    }
  }
  return out;
}

function strip(value: unknown, inPropertyMap = false): unknown {
  if (Array.isArray(value)) return value.map((item) => strip(item));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // In a `properties` map every key is a field name (a field may be called "description").
    if (!inPropertyMap && ANNOTATIONS.has(key)) continue;
    out[key] = strip(item, key === "properties" && !inPropertyMap);
  }
  return out;
}

/** The reference document's structure when shared/reference/ is there; else the committed extract. */
export function vendorDocument<T>(name: VendorDocumentName): T {
  const reference = REFERENCE(name);
  if (existsSync(reference)) return extractContract(JSON.parse(readFileSync(reference, "utf8"))) as T;
  return JSON.parse(readFileSync(EXTRACT(name), "utf8")) as T;
}

/** The committed extract, and the fresh one from shared/reference/ (undefined without it). */
export function extractAndReference(name: VendorDocumentName): { committed: unknown; fresh?: unknown } {
  const committed = JSON.parse(readFileSync(EXTRACT(name), "utf8"));
  const reference = REFERENCE(name);
  return { committed, fresh: existsSync(reference) ? extractContract(JSON.parse(readFileSync(reference, "utf8"))) : undefined };
}

export const extractPath = EXTRACT;
export const referencePath = REFERENCE;
