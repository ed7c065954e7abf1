import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { flagTables, generatedBlock } from "../../src/cli/flag-reference.ts";

/** docs/configuration.md lists every flag of `up` and `agent` and every variable Slipway reads (issue #30). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const reference = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name === "web" ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Names read from the environment: `env.NAME`, `env["NAME"]`, or passed as a quoted name to a reader. */
function variablesRead(): Map<string, string> {
  const found = new Map<string, string>();
  const reads = /env\??\.(SLIPWAY_[A-Z0-9_]+)|env\[["'](SLIPWAY_[A-Z0-9_]+)["']\]|["'](SLIPWAY_[A-Z0-9_]+)["']/g;
  for (const file of [...sourceFiles(join(ROOT, "src")), ...sourceFiles(join(ROOT, "bin"))]) {
    for (const match of readFileSync(file, "utf8").matchAll(reads)) {
      const name = match[1] ?? match[2] ?? match[3]!;
      if (!found.has(name)) found.set(name, file.slice(ROOT.length));
    }
  }
  return found;
}

describe("the configuration reference", () => {
  it("carries the flag tables as the commands define them (npm run docs:config rewrites them)", () => {
    expect(generatedBlock(reference)).toBe(flagTables().trim());
  });

  it("names every environment variable the sources read", () => {
    const read = variablesRead();
    // The scan itself finds the variables it should (a broken pattern would pass vacuously).
    expect([...read.keys()]).toEqual(expect.arrayContaining(["SLIPWAY_DATA_DIR", "SLIPWAY_READINESS_TIMEOUT_SECONDS", "SLIPWAY_FROM_SOURCES"]));
    const missing = [...read].filter(([name]) => !reference.includes(`\`${name}\``)).map(([name, file]) => `${name} (read in ${file})`);
    expect(missing).toEqual([]);
  });
});
