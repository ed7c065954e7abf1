// `npm run vendor-contract`: rewrites test/fixtures/vendor-contract/*.json, the structure of
// the vendor's OpenAPI documents (no prose) that the contract tests use when
// shared/reference/ is not beside the repository.
import { readFileSync, writeFileSync } from "node:fs";
import { extractContract, extractPath, referencePath, type VendorDocumentName } from "../test/support/vendor-contract.ts";

for (const name of ["agent-server", "control-plane"] as VendorDocumentName[]) {
  const document = JSON.parse(readFileSync(referencePath(name), "utf8"));
  writeFileSync(extractPath(name), `${JSON.stringify(extractContract(document), null, 1)}\n`);
  console.log(`wrote ${extractPath(name)}`);
}
