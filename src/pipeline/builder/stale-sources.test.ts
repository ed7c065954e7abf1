import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeFetchedSource, removeStaleSources } from "./stale-sources.ts";

describe("fetched sources a build never took over", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  function dataDir(): string {
    const root = mkdtempSync(join(tmpdir(), "slipway-stale-"));
    roots.push(root);
    return root;
  }

  it("are removed at start, and the builds beside them are kept", () => {
    const root = dataDir();
    mkdirSync(join(root, "builds", ".tmp-a1", "src"), { recursive: true });
    writeFileSync(join(root, "builds", ".tmp-a1", "src", "x.ts"), "x");
    mkdirSync(join(root, "builds", "0f3c9e"), { recursive: true });
    expect(removeStaleSources(root)).toEqual([".tmp-a1"]);
    expect(existsSync(join(root, "builds", ".tmp-a1"))).toBe(false);
    expect(existsSync(join(root, "builds", "0f3c9e"))).toBe(true);
    expect(removeStaleSources(dataDir())).toEqual([]);
  });

  it("are removed after a failed build, and nothing else is", () => {
    const root = dataDir();
    const fetched = join(root, "builds", ".tmp-b2");
    const build = join(root, "builds", "9a9a");
    mkdirSync(fetched, { recursive: true });
    mkdirSync(build, { recursive: true });
    removeFetchedSource(fetched);
    removeFetchedSource(build);
    removeFetchedSource(undefined);
    expect(existsSync(fetched)).toBe(false);
    expect(existsSync(build)).toBe(true);
  });
});
