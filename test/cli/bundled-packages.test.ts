import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: bin/bundle.js is plain JavaScript without declarations.
import { freshBundle } from "../../bin/bundle.js";

/**
 * typebox and uuid are compiled into Slipway's bundle (bin/bundle.js): their hundreds of
 * small ES modules were a module load each at every start of an agent process. Every
 * other package stays an import of node_modules.
 */
describe("packages in Slipway's bundle", () => {
  it("imports neither typebox nor uuid from node_modules, and still imports fastify from there", async () => {
    const entry = (await freshBundle()) as string | undefined;
    expect(entry).toBeDefined();
    const dir = dirname(entry as string);
    const code = readdirSync(dir)
      .filter((name) => name.endsWith(".js"))
      .map((name) => readFileSync(join(dir, name), "utf8"))
      .join("\n");
    const imported = new Set([...code.matchAll(/(?:from|import\()\s*"([^"./][^"]*)"/g)].map((match) => match[1]));
    expect([...imported].filter((name) => /^(@sinclair\/typebox|uuid)(\/|$)/.test(name as string))).toEqual([]);
    expect(imported).toContain("fastify");
  });
});
