import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { choosePlace } from "./output-place.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A folder tree with the given folders made (packages are folders under node_modules). */
function tree(folders: string[]): string {
  const root = mkdtempSync(join(tmpdir(), "slipway-place-"));
  made.push(root);
  for (const folder of folders) mkdirSync(join(root, folder), { recursive: true });
  return root;
}

describe("where compiled output finds the same packages as its sources", () => {
  it("the project's root, when every module finds its packages from there", () => {
    const root = tree(["node_modules/@langchain/langgraph", "src/lib"]);
    const imports = [
      { importer: join(root, "src/agent.ts"), specifier: "@langchain/langgraph/prebuilt" },
      { importer: join(root, "src/lib/util.ts"), specifier: "node:fs" },
    ];
    expect(choosePlace(root, imports)).toBe(root);
  });

  it("a graph's folder with its own node_modules (a monorepo), when the root would find another copy", () => {
    const root = tree(["node_modules/zod", "apps/agent/node_modules/zod", "apps/agent/src"]);
    const imports = [{ importer: join(root, "apps/agent/src/graph.ts"), specifier: "zod" }];
    expect(choosePlace(root, imports)).toBe(join(root, "apps/agent"));
  });

  it("none, when two modules find different copies of one package", () => {
    const root = tree(["node_modules/zod", "apps/agent/node_modules/zod", "apps/agent/src", "shared"]);
    const imports = [
      { importer: join(root, "apps/agent/src/graph.ts"), specifier: "zod" },
      { importer: join(root, "shared/tools.ts"), specifier: "zod" },
    ];
    expect(choosePlace(root, imports)).toBeUndefined();
  });
});
