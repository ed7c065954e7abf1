import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readSavedExtraction, saveExtraction } from "../../src/agentserver/assistants/graph-schemas/cache-file.ts";
import { graphSources, StaticGraphSchemas } from "../../src/agentserver/assistants/graph-schemas/static-schemas.ts";
import { readLanggraphConfig } from "../../src/agentserver/graphs/langgraph-config.ts";

/**
 * Schema extraction's time bound and its saved file (decision 0013): a slow
 * extraction gives way to the run-time schemas, a saved one is used while the files
 * it came from are unchanged, and a change to any of them makes it stale.
 */
const ROOT = fileURLToPath(new URL("../fixtures/graph-kinds/", import.meta.url));
const sources = graphSources(readLanggraphConfig(join(ROOT, "langgraph.json")));
const warnings: string[] = [];
const log = { warn: (_: unknown, msg: string) => warnings.push(msg), info: () => undefined };

describe("graph schema extraction: time bound and saved file", () => {
  it("an extraction past its time bound yields nothing (run-time schemas stand), and it is told", async () => {
    const schemas = new StaticGraphSchemas({ root: ROOT, sources, timeoutMs: 1, cacheFile: null, log });
    expect(await schemas.of("annotation")).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/could not be read from the TypeScript types/);
  });

  it("extracts once, saves, and a later process reads the file instead of extracting", async () => {
    const cacheFile = join(mkdtempSync(join(tmpdir(), "slipway-schemas-")), "graph-schemas.json");
    const first = new StaticGraphSchemas({ root: ROOT, sources: sources.filter((s) => s.graphId === "typed"), timeoutMs: 120_000, cacheFile, log });
    const extracted = await first.of("typed");
    expect(Object.keys((extracted![""]!.state as { properties: object }).properties)).toEqual(["title", "priority", "labels", "assignee", "meta"]);
    // Asked again, the same process shares its one extraction.
    expect(await first.of("typed")).toBe(extracted);
    // A time bound no extraction could meet: only the saved file can answer.
    const later = new StaticGraphSchemas({ root: ROOT, sources: sources.filter((s) => s.graphId === "typed"), timeoutMs: 1, cacheFile, log });
    expect(await later.of("typed")).toEqual(extracted);
  }, 150_000);

  it("a saved extraction is stale once a file it was read from changes, or the graphs differ", () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-schemas-"));
    const source = join(dir, "graph.ts");
    writeFileSync(source, "export const graph = 1;\n");
    const cacheFile = join(dir, "graph-schemas.json");
    const own = [{ graphId: "g", file: source, exportName: "graph" }];
    saveExtraction(cacheFile, own, { graphs: { g: { "": { state: { type: "object" } } } }, problems: {}, files: [source] }, dir);
    expect(readSavedExtraction(cacheFile, own, dir)?.graphs.g).toEqual({ "": { state: { type: "object" } } });
    expect(readSavedExtraction(cacheFile, [{ ...own[0]!, exportName: "other" }], dir)).toBeUndefined();
    writeFileSync(source, "export const graph = 2;\n");
    expect(readSavedExtraction(cacheFile, own, dir)).toBeUndefined();
    expect(JSON.parse(readFileSync(cacheFile, "utf8")).graphs.g).toBeDefined();
  });

  it("a saved extraction still holds once the project directory is moved (the pipeline checks, then moves, a build)", () => {
    const parent = mkdtempSync(join(tmpdir(), "slipway-schemas-"));
    const before = join(parent, "checked");
    mkdirSync(join(before, "src"), { recursive: true });
    writeFileSync(join(before, "src", "graph.ts"), "export const graph = 1;\n");
    const sourcesIn = (root: string) => [{ graphId: "g", file: join(root, "src", "graph.ts"), exportName: "graph" }];
    const extraction = { graphs: { g: { "": { state: { type: "object" } } } }, problems: {}, files: [join(before, "src", "graph.ts")] };
    saveExtraction(join(before, ".slipway", "graph-schemas.json"), sourcesIn(before), extraction, before);
    const after = join(parent, "served");
    renameSync(before, after);
    const read = readSavedExtraction(join(after, ".slipway", "graph-schemas.json"), sourcesIn(after), after);
    expect(read?.graphs.g).toEqual(extraction.graphs.g);
    expect(read?.files).toEqual([join(after, "src", "graph.ts")]);
  });
});
