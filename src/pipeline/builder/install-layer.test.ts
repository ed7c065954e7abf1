import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installLayerKey, restoreInstallLayer, saveInstallLayer } from "./install-layer.ts";
import { planInstall } from "./package-manager.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "slipway-layer-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, manifest: object, lock = '{"lockfileVersion":3}'): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest));
  writeFileSync(join(dir, "package-lock.json"), lock);
  return dir;
}

const keyOf = (dir: string, buildCommand: string | null = null) => installLayerKey(planInstall(dir), dir, buildCommand);

describe("installLayerKey", () => {
  it("is the same for the same lock file and manifest, and changes with either", () => {
    const a = keyOf(project("a", { name: "x", dependencies: { y: "1" } }));
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(keyOf(project("b", { name: "x", dependencies: { y: "1" } }))).toBe(a);
    expect(keyOf(project("c", { name: "x", dependencies: { y: "2" } }))).not.toBe(a);
    expect(keyOf(project("d", { name: "x", dependencies: { y: "1" } }, '{"lockfileVersion":3,"x":1}'))).not.toBe(a);
  });

  it("is undefined where the install may produce more than node_modules", () => {
    expect(keyOf(project("ws", { name: "x", workspaces: ["packages/*"] }))).toBeUndefined();
    expect(keyOf(project("scripted", { name: "x", scripts: { postinstall: "node gen.js" } }))).toBeUndefined();
    expect(keyOf(project("built", { name: "x" }), "npm run build")).toBeUndefined();
    const unlocked = join(root, "unlocked");
    mkdirSync(unlocked);
    writeFileSync(join(unlocked, "package.json"), "{}");
    expect(keyOf(unlocked)).toBeUndefined();
  });
});

describe("saveInstallLayer / restoreInstallLayer", () => {
  it("gives a later build the same tree, linked, symlinks kept", async () => {
    const first = project("first", { name: "x" });
    mkdirSync(join(first, "node_modules", "dep", "lib"), { recursive: true });
    writeFileSync(join(first, "node_modules", "dep", "lib", "index.js"), "module.exports = 1;");
    mkdirSync(join(first, "node_modules", ".bin"));
    symlinkSync("../dep/lib/index.js", join(first, "node_modules", ".bin", "dep"));
    const cache = join(root, "cache");
    const key = keyOf(first)!;

    const second = project("second", { name: "x" });
    expect(await restoreInstallLayer(cache, key, second)).toBe(false);
    await saveInstallLayer(cache, key, first);
    expect(await restoreInstallLayer(cache, key, second)).toBe(true);

    const file = join(second, "node_modules", "dep", "lib", "index.js");
    expect(readFileSync(file, "utf8")).toBe("module.exports = 1;");
    expect(statSync(file).ino).toBe(statSync(join(first, "node_modules", "dep", "lib", "index.js")).ino);
    const bin = join(second, "node_modules", ".bin", "dep");
    expect(lstatSync(bin).isSymbolicLink()).toBe(true);
    expect(readlinkSync(bin)).toBe("../dep/lib/index.js");
  });
});
