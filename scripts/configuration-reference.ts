/**
 * `npm run docs:config`: rewrites the generated flag tables of docs/configuration.md
 * from the commands' own definitions (test/docs/configuration-reference.test.ts checks them).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { flagTables, replaceGenerated } from "../src/cli/flag-reference.ts";

const doc = fileURLToPath(new URL("../docs/configuration.md", import.meta.url));
writeFileSync(doc, replaceGenerated(readFileSync(doc, "utf8"), flagTables()));
console.log(`wrote ${doc}`);
