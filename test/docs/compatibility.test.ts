import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { servedDocument } from "../controlplane/deployments-fixture.ts";
import { vendorDocument } from "../support/vendor-contract.ts";

/**
 * docs/compatibility.md's "Slipway additions" name every control-plane route and
 * `slipway_*` field that the vendor's document lacks, and name nothing our
 * /openapi.json lacks: a route added without a line there, or a line left after its
 * route went, fails here.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const page = readFileSync(join(ROOT, "docs/compatibility.md"), "utf8");
const additions = page.slice(page.indexOf("## Slipway additions"));

type Document = { paths: Record<string, Record<string, unknown>> };
const METHODS = ["get", "post", "put", "patch", "delete"];
/** Served by both sides outside the vendor's control-plane document: API docs. */
const NOT_ADDITIONS = new Set(["GET /docs"]);

function operations(doc: Document): Set<string> {
  return new Set(
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    ),
  );
}

/** `METHOD /path` spans of the additions section. */
function namedOperations(): string[] {
  return [...additions.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]+)`/g)].map((m) => `${m[1]} ${m[2]}`);
}

function slipwayFields(text: string): Set<string> {
  return new Set([...text.matchAll(/\bslipway_[a-z_]+\b/g)].map((m) => m[0]));
}

describe("docs/compatibility.md against the control plane's /openapi.json", () => {
  const served = servedDocument<Document>();

  it("names every route we add to the vendor's, and only routes we serve", () => {
    const mine = operations(served.document());
    const vendor = operations(vendorDocument<Document>("control-plane"));
    const added = [...mine].filter((op) => !vendor.has(op) && !NOT_ADDITIONS.has(op));
    expect(added.length, "the comparison finds our additions").toBeGreaterThan(10);
    const named = namedOperations();
    expect(
      added.filter((op) => !named.includes(op)),
      "served, not in the additions",
    ).toEqual([]);
    expect(
      named.filter((op) => !mine.has(op)),
      "in the additions, not served",
    ).toEqual([]);
  });

  it("names every slipway_* field of the document, and only those", () => {
    const inDocument = slipwayFields(JSON.stringify(served.document()));
    expect(inDocument.size).toBeGreaterThan(0);
    expect([...inDocument].filter((field) => !additions.includes(`\`${field}\``))).toEqual([]);
    expect([...slipwayFields(additions)].filter((field) => !inDocument.has(field))).toEqual([]);
  });
});
