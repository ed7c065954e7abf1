import { describe, expect, it } from "vitest";
import { extractAndReference, type VendorDocumentName } from "./support/vendor-contract.ts";

/**
 * The committed extract of the vendor's OpenAPI documents (used by the contract tests
 * when shared/reference/ is absent) must match the reference wherever the reference is
 * there; `npm run vendor-contract` brings it up to date.
 */
describe.each(["agent-server", "control-plane"] as VendorDocumentName[])("vendor contract extract: %s", (name) => {
  it("holds operations, and equals a fresh extract of shared/reference/ when that is present", () => {
    const { committed, fresh } = extractAndReference(name);
    const paths = (committed as { paths: Record<string, Record<string, unknown>> }).paths;
    expect(Object.values(paths).flatMap((item) => Object.keys(item)).length).toBeGreaterThan(30);
    if (fresh !== undefined) expect(committed, "run `npm run vendor-contract`").toEqual(fresh);
  });
});
