import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { langgraphVersionFor } from "./langgraph-version.ts";

function install(dir: string, version: string): void {
  mkdirSync(join(dir, "node_modules", "@langchain", "langgraph"), { recursive: true });
  writeFileSync(join(dir, "node_modules", "@langchain", "langgraph", "package.json"), JSON.stringify({ name: "@langchain/langgraph", version }));
}

describe("the @langchain/langgraph a graph module imports", () => {
  it("is the nearest install walking up from the module, as Node resolves it", () => {
    const workspace = mkdtempSync(join(tmpdir(), "slipway-lgversion-"));
    install(workspace, "0.3.7");
    mkdirSync(join(workspace, "apps", "agent", "src"), { recursive: true });
    expect(langgraphVersionFor(join(workspace, "apps", "agent", "src", "graph.ts"))).toBe("0.3.7");
    install(join(workspace, "apps", "agent"), "0.2.8");
    expect(langgraphVersionFor(join(workspace, "apps", "agent", "src", "graph.ts"))).toBe("0.2.8");
  });

  it("is unknown for a module with no install above it", () => {
    const lone = mkdtempSync(join(tmpdir(), "slipway-lgversion-"));
    expect(langgraphVersionFor(join(lone, "graph.ts"))).toBeUndefined();
  });
});
