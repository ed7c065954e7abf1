// @ts-check
// Writes a new, empty cluster as a template tarball (decision 0046's compacted cluster),
// run by pglite.ts as a process of its own: `node pglite-template-writer.mjs <path>`.
// initdb in WebAssembly leaves the process that ran it holding memory it never gives back
// (about 60 MB more at rest for a control plane whose first cluster was written on one of
// its threads): a process that exits returns all of it.
import { writeFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { compactNewCluster, NEW_CLUSTER_INITDB, NEW_CLUSTER_START } from "./pglite-compact.mjs";

const path = process.argv[2];
if (!path) throw new Error("usage: pglite-template-writer.mjs <tarball path>");
const pg = new PGlite({ initDbStartParams: NEW_CLUSTER_INITDB, startParams: NEW_CLUSTER_START });
await pg.waitReady;
await compactNewCluster(pg);
const dump = await pg.dumpDataDir("none");
writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
await pg.close();
