import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pruneCache } from "./cache-prune.ts";
import { beginBuild } from "./underway.ts";

describe("a package cache's pruning", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A cache with two install layers, two Python environments, a half-made one, and 64 KiB of npm downloads; a build using layer `a` and environment `k`. */
  function cache() {
    const root = mkdtempSync(join(tmpdir(), "slipway-cache-prune-"));
    roots.push(root);
    const dir = join(root, "cache");
    for (const layer of ["a", "b", "c.123.partial"]) mkdirSync(join(dir, "installs", layer, "node_modules"), { recursive: true });
    for (const env of ["k.1111", "j.2222", "h.3333"]) mkdirSync(join(dir, "python-envs", env, "bin"), { recursive: true });
    symlinkSync(join(dir, "python-envs", "k.1111"), join(dir, "python-envs", "k"));
    symlinkSync(join(dir, "python-envs", "j.2222"), join(dir, "python-envs", "j"));
    mkdirSync(join(dir, "npm", "_cacache"), { recursive: true });
    writeFileSync(join(dir, "npm", "_cacache", "blob"), Buffer.alloc(64 * 1024, 1));
    mkdirSync(join(dir, "python-wheels"), { recursive: true });
    const build = join(root, "build");
    mkdirSync(build, { recursive: true });
    symlinkSync(join(dir, "python-envs", "k.1111"), join(build, ".venv"));
    return { dir, users: [{ install_layer: "a", config_file: join(build, "langgraph.json") }] };
  }

  it("removes the layers and environments no build uses, keeps the rest and the operator's wheels", async () => {
    const { dir, users } = cache();
    const removed = await pruneCache(dir, { users, downloadLimitBytes: 1 << 30 });
    expect(removed.sort()).toEqual(["installs/b", "installs/c.123.partial", "python-envs/h.3333", "python-envs/j", "python-envs/j.2222"]);
    expect(readdirSync(join(dir, "installs"))).toEqual(["a"]);
    expect(readdirSync(join(dir, "python-envs")).sort()).toEqual(["k", "k.1111"]);
    expect(readdirSync(dir).sort()).toEqual(["installs", "npm", "python-envs", "python-wheels"]);
  });

  it("removes the download caches past the limit, or when no deployment is left (limit 0)", async () => {
    const { dir, users } = cache();
    await pruneCache(dir, { users, downloadLimitBytes: 1 << 20 });
    expect(existsSync(join(dir, "npm"))).toBe(true);
    expect(await pruneCache(dir, { users, downloadLimitBytes: 16 * 1024 })).toEqual(["npm"]);
    expect(existsSync(join(dir, "npm"))).toBe(false);
    const other = cache();
    expect(await pruneCache(other.dir, { users: [], downloadLimitBytes: 0 })).toContain("npm");
    expect(readdirSync(other.dir).sort()).toEqual(["installs", "python-envs", "python-wheels"]);
    expect(readdirSync(join(other.dir, "installs"))).toEqual([]);
  });

  it("removes nothing while a build runs in this process, and finishes a removal a crash cut short", async () => {
    const { dir, users } = cache();
    const end = beginBuild();
    try {
      expect(await pruneCache(dir, { users: [], downloadLimitBytes: 0 })).toEqual([]);
      expect(readdirSync(join(dir, "installs")).sort()).toEqual(["a", "b", "c.123.partial"]);
    } finally {
      end();
    }
    mkdirSync(join(dir, ".removing-installs-x", "node_modules"), { recursive: true });
    await pruneCache(dir, { users, downloadLimitBytes: 1 << 30 });
    expect(existsSync(join(dir, ".removing-installs-x"))).toBe(false);
  });
});
