// What each deployment's embedded database costs the control plane in memory (issue 32).
// Opens N shared hosts one after the other, as DeploymentStorage does (a cluster unpacked
// from the template, served on a socket), has a client apply the agent's migrations on
// each, and prints this process's resident (RSS) and proportional (PSS) memory from
// /proc/self/smaps_rollup, against the process before the first database.
//
//   node --expose-gc --import tsx bench/pglite-memory.ts                            # N = 1, 5, 10
//   node --expose-gc --import tsx bench/pglite-memory.ts --counts 1,5,20 --json
//
// --expose-gc lets it collect before each reading, so that garbage of the main thread is not
// counted. With --json, the last line holds one object per N.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { migrate } from "../src/storage/migrate.ts";
import { writePgliteTemplate, type ThreadMemory } from "../src/storage/pglite.ts";
import { openSharedPglite } from "../src/storage/shared-pglite-client.ts";
import { startSharedPgliteHost, type SharedPgliteHost } from "../src/storage/shared-pglite-host.ts";

const MB = 1024 * 1024;
const { values } = parseArgs({ options: { counts: { type: "string", default: "1,5,10" }, json: { type: "boolean", default: false } } });
const counts = values.counts!.split(",").map(Number);
if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--counts takes positive integers, such as 1,5,10, not ${values.counts}`);

/** Resident and proportional memory of this process, in bytes. */
function memory(): { rss: number; pss: number } {
  const rollup = readFileSync("/proc/self/smaps_rollup", "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)![1]) * 1024;
  return { rss: field("Rss"), pss: field("Pss") };
}

/** After a collection and a pause, so that what is measured is what stays. */
async function settled(): Promise<{ rss: number; pss: number }> {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return memory();
}

const dir = mkdtempSync(join(tmpdir(), "slipway-pglite-memory-"));
const hosts: SharedPgliteHost[] = [];
const rows: Array<Record<string, number>> = [];
try {
  const template = join(dir, "cluster.tar");
  await writePgliteTemplate(template);
  const base = await settled();
  const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
  console.log(`before any database: RSS ${mb(base.rss)} MB, PSS ${mb(base.pss)} MB`);
  for (let n = 1; n <= Math.max(...counts); n++) {
    const host = await startSharedPgliteHost({ dataDir: join(dir, `db-${n}`), schema: "slipway_agent", socketPath: join(dir, `db-${n}.sock`), template });
    hosts.push(host);
    const client = await openSharedPglite(host.socketPath);
    await migrate(client, "agent");
    await client.close();
    if (!counts.includes(n)) continue;
    const now = await settled();
    const thread: ThreadMemory = await host.threadMemory();
    const row = {
      databases: n,
      rssMB: mb(now.rss),
      pssMB: mb(now.pss),
      rssPerDatabaseMB: mb((now.rss - base.rss) / n),
      pssPerDatabaseMB: mb((now.pss - base.pss) / n),
      threadWasmMemoryMB: mb(thread.wasmMemory),
      threadHeapNewSpaceMB: mb(thread.heapNewSpace),
      threadHeapOtherMB: mb(thread.heapOther),
      threadArrayBuffersMB: mb(thread.arrayBuffers),
    };
    rows.push(row);
    console.log(
      `${n} database(s): RSS ${row.rssMB} MB (${row.rssPerDatabaseMB} MB each), PSS ${row.pssMB} MB (${row.pssPerDatabaseMB} MB each); ` +
        `last thread: WebAssembly memory ${row.threadWasmMemoryMB} MB reserved, JS heap ${row.threadHeapNewSpaceMB} MB young + ${row.threadHeapOtherMB} MB other, ArrayBuffers ${row.threadArrayBuffersMB} MB`,
    );
  }
} finally {
  for (const host of hosts) await host.close();
  rmSync(dir, { recursive: true, force: true });
}
if (values.json) console.log(JSON.stringify(rows));
