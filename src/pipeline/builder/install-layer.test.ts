import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyInstallLayer, installLayerKey, restoreInstallLayer, saveInstallLayer } from "./install-layer.ts";
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

describe("copyInstallLayer", () => {
  it("copies another cache's layer, never linking it, symlinks and modes kept; false when neither cache has it", async () => {
    const first = project("first", { name: "x" });
    mkdirSync(join(first, "node_modules", "dep", "bin"), { recursive: true });
    writeFileSync(join(first, "node_modules", "dep", "bin", "run.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
    mkdirSync(join(first, "node_modules", ".bin"));
    symlinkSync("../dep/bin/run.js", join(first, "node_modules", ".bin", "dep"));
    const shared = join(root, "shared");
    const own = join(root, "own");
    const key = keyOf(first)!;
    expect(await copyInstallLayer(shared, own, key)).toBe(false);
    await saveInstallLayer(shared, key, first);

    expect(await copyInstallLayer(shared, own, key)).toBe(true);
    const copied = join(own, "installs", key, "node_modules", "dep", "bin", "run.js");
    const original = join(shared, "installs", key, "node_modules", "dep", "bin", "run.js");
    expect(readFileSync(copied, "utf8")).toBe("#!/usr/bin/env node\n");
    // A file of its own: what the deployment's build writes through its links stays out of the shared layer.
    expect(statSync(copied).ino).not.toBe(statSync(original).ino);
    expect(statSync(copied).mode & 0o777).toBe(0o755);
    expect(readlinkSync(join(own, "installs", key, "node_modules", ".bin", "dep"))).toBe("../dep/bin/run.js");
    writeFileSync(copied, "changed");
    expect(readFileSync(original, "utf8")).toBe("#!/usr/bin/env node\n");

    const build = project("build", { name: "x" });
    expect(await restoreInstallLayer(own, key, build)).toBe(true);
    expect(await copyInstallLayer(shared, own, key)).toBe(true);
  });
});
