import { describe, expect, it } from "vitest";
import { API_HOST } from "../../src/controlplane/app.ts";
import { canonicalUrl } from "../../src/http/canonical-url.ts";
import { vendorDocument } from "../support/vendor-contract.ts";
import { servedDocument } from "./deployments-fixture.ts";

/**
 * Wire contract against the vendor's control-plane OpenAPI document: for every vendor path
 * and method, ours exists (at the root and under /api-host), answers the same success status,
 * and its response schema has every property the vendor marks required, recursively.
 * Covers all groups (deployments, listeners, integrations, auth service), whoever builds them.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Operation = { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

/**
 * Deliberate differences, each with its reason. Secret values are write-only: a Deployment
 * (alone or in a list) names its secrets and never carries their values (the rule).
 */
const EXEMPT: RegExp[] = [/(^|\.)secrets\[\]\.value$/];

// shared/reference/ beside the repository, or its committed extract (test/support/vendor-contract.ts).
const vendor = vendorDocument<Document>("control-plane");
const METHODS = ["get", "post", "put", "patch", "delete"];
const operations = Object.entries(vendor.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((method) => METHODS.includes(method))
    .map((method) => ({ path, method, operation: item[method] })),
);

function resolve(doc: Document, schema: Schema | undefined): Schema | undefined {
  let current = schema;
  for (let hops = 0; current?.$ref && hops < 20; hops++) {
    const name = current.$ref.split("/").pop()!;
    current = doc.components?.schemas?.[name];
  }
  return current;
}

/** The object (or array) variant of a nullable union, resolved. */
function concrete(doc: Document, schema: Schema | undefined): Schema | undefined {
  const resolved = resolve(doc, schema);
  const variants = resolved?.anyOf ?? resolved?.oneOf;
  if (variants)
    return concrete(
      doc,
      variants.find((v) => resolve(doc, v)?.type !== "null"),
    );
  if (resolved?.allOf?.length === 1) return concrete(doc, resolved.allOf[0]);
  return resolved;
}

function successStatus(operation: Operation | undefined): string | undefined {
  return Object.keys(operation?.responses ?? {})
    .filter((code) => /^2\d\d$/.test(code))
    .sort()[0];
}

function responseSchema(doc: Document, operation: Operation | undefined, status: string): Schema | undefined {
  return concrete(doc, operation?.responses?.[status]?.content?.["application/json"]?.schema);
}

/** Paths like `Deployment.source_config` of vendor-required properties our schema lacks. */
function missingRequired(theirs: Schema | undefined, ours: Schema | undefined, where: string, ourDoc: Document): string[] {
  const vendorSchema = concrete(vendor, theirs);
  const ourSchema = concrete(ourDoc, ours);
  if (!vendorSchema) return [];
  if (vendorSchema.type === "array" || vendorSchema.items) {
    return missingRequired(vendorSchema.items, ourSchema?.items, `${where}[]`, ourDoc);
  }
  const missing: string[] = [];
  for (const name of vendorSchema.required ?? []) {
    const at = `${where}.${name}`;
    if (EXEMPT.some((pattern) => pattern.test(at))) continue;
    if (!ourSchema?.properties?.[name]) {
      missing.push(at);
      continue;
    }
    missing.push(...missingRequired(vendorSchema.properties?.[name], ourSchema.properties[name], at, ourDoc));
  }
  return missing;
}

/** The vendor's `{param}` path as a Fastify route path. */
const routePath = (path: string) => path.replace(/\{([^}]+)\}/g, ":$1");

describe("control-plane contract with the vendor's OpenAPI", () => {
  const served = servedDocument<Document>();

  it("reads the vendor document: 39 operations, each served", () => {
    const ours = served.document();
    expect(operations.length).toBe(39);
    const missing = operations.filter(({ path, method }) => !ours.paths[path]?.[method]).map(({ path, method }) => `${method} ${path}`);
    expect(missing).toEqual([]);
    expect(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`)).toContain("PATCH /v2/listeners/{listener_id}");
  });

  for (const { path, method, operation } of operations) {
    it(`${method.toUpperCase()} ${path}`, () => {
      const ours = served.document();
      const cp = served.cp();
      const mine = ours.paths[path]?.[method];
      expect(mine, `${method.toUpperCase()} ${path} is missing from /openapi.json`).toBeDefined();
      for (const prefix of ["", "/api-host"]) {
        // /api-host is an alias taken off before routing: the route it reaches must exist.
        const mounted = cp.app.hasRoute({ method: method.toUpperCase() as "GET", url: canonicalUrl(`${prefix}${routePath(path)}`, [API_HOST]) });
        expect(mounted, `${method.toUpperCase()} ${prefix}${path} is not routed`).toBe(true);
      }
      const status = successStatus(operation)!;
      expect(successStatus(mine), "success status").toBe(status);
      // Every status the vendor documents (its success and its 422) is one ours documents.
      const vendorStatuses = Object.keys(operation.responses ?? {});
      expect(
        vendorStatuses.filter((code) => !mine?.responses?.[code]),
        "statuses the vendor documents",
      ).toEqual([]);
      const theirSchema = operation.responses?.[status]?.content?.["application/json"]?.schema;
      const title = theirSchema?.$ref?.split("/").pop() ?? "response";
      expect(missingRequired(theirSchema, responseSchema(ours, mine, status), title, ours)).toEqual([]);
    });
  }
});
