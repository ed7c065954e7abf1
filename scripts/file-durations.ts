/**
 * Refreshes test/support/file-durations.json (the order in which the suite's files start:
 * test/support/slowest-first-sequencer.ts) from a vitest JSON report of a whole run:
 *   npx vitest run --reporter=json --outputFile.json=report.json
 *   npm run test:durations -- report.json
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const [reportPath] = process.argv.slice(2);
if (!reportPath) {
  console.error("usage: npm run test:durations -- <vitest JSON report>");
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, "utf8")) as { testResults: { name: string; startTime: number; endTime: number }[] };
const seconds = report.testResults
  .map((file) => [relative(process.cwd(), file.name), Math.round((file.endTime - file.startTime) / 1000)] as const)
  .filter(([, s]) => s >= 5)
  .sort((a, b) => b[1] - a[1]);
writeFileSync("test/support/file-durations.json", `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`);
console.log(`test/support/file-durations.json: ${seconds.length} files of 5 s or more`);
