import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StepFailure } from "../failure.ts";
import { planInstall, resolveManager } from "./package-manager.ts";
import { globMatches, inspectProject } from "./project.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "slipway-project-"));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const config = (graphs: Record<string, string>, extra: object = {}) => JSON.stringify({ graphs, ...extra });

describe("inspectProject", () => {
  it("finds the config and installs in its folder", () => {
    const root = tree({ "langgraph.json": config({ agent: "./src/agent.ts:graph" }), "src/agent.ts": "", "package.json": "{}" });
    const project = inspectProject(root, "langgraph.json");
    expect(project.installDir).toBe(root);
    expect(project.configFile).toBe(join(root, "langgraph.json"));
  });

  it("installs a project of a workspace monorepo at the workspace root (npm workspaces, pnpm-workspace.yaml)", () => {
    const npm = tree({
      "package.json": JSON.stringify({ workspaces: ["apps/*", "packages/*"] }),
      "apps/agent/package.json": "{}",
      "apps/agent/langgraph.json": config({ agent: "./agent.ts:graph" }),
      "apps/agent/agent.ts": "",
    });
    const project = inspectProject(npm, "apps/agent/langgraph.json");
    expect(project.installDir).toBe(npm);
    expect(project.installReason).toContain("workspace root . lists apps/agent");
    const pnpm = tree({
      "pnpm-workspace.yaml": "packages:\n  - 'services/**'\n",
      "package.json": "{}",
      "services/deep/agent/langgraph.json": config({ agent: "./a.ts:graph" }),
      "services/deep/agent/a.ts": "",
    });
    expect(inspectProject(pnpm, "services/deep/agent/langgraph.json").installDir).toBe(pnpm);
  });

  it("fails the build with what to do for a missing or broken config, a missing graph file, a path that leaves the tree", () => {
    const root = tree({ "langgraph.json": config({ agent: "./src/agent.ts:graph" }), "broken/langgraph.json": "{ not json", "src/other.ts": "" });
    const failure = (path: string) => {
      try {
        inspectProject(root, path);
      } catch (error) {
        expect(error).toBeInstanceOf(StepFailure);
        expect((error as StepFailure).status).toBe("BUILD_FAILED");
        return (error as Error).message;
      }
      throw new Error("expected a failure");
    };
    expect(failure("nope/langgraph.json")).toMatch(/does not exist in the source\. The tree has one at its root: langgraph\.json/);
    expect(failure("broken/langgraph.json")).toMatch(/is not valid JSON/);
    expect(failure("langgraph.json")).toMatch(/graphs\.agent points at \.\/src\/agent\.ts, which does not exist/);
    expect(failure("../outside.json")).toMatch(/leaves the source tree/);
  });

  it("refuses a node_version above the running major before any install, and lets an older major through", () => {
    const root = tree({ "langgraph.json": config({ agent: "./a.ts:graph" }, { node_version: "99" }), "a.ts": "" });
    expect(() => inspectProject(root, "langgraph.json", "20.19.2")).toThrow(
      /langgraph\.json: node_version: the project asks for Node 99 but this server runs Node 20\.19\.2, an older major/,
    );
    const older = tree({ "langgraph.json": config({ agent: "./a.ts:graph" }, { node_version: "20" }), "a.ts": "" });
    expect(inspectProject(older, "langgraph.json", "22.3.0").configFile).toBe(join(realpathSync(older), "langgraph.json"));
  });
});

describe("globMatches", () => {
  it("matches workspace globs as package managers do", () => {
    expect(globMatches("apps/*", "apps/agent")).toBe(true);
    expect(globMatches("apps/*", "apps/agent/sub")).toBe(false);
    expect(globMatches("apps/**", "apps/agent/sub")).toBe(true);
    expect(globMatches("./packages/agent/", "packages/agent")).toBe(true);
    expect(globMatches("pkg.v1/*", "pkgxv1/a")).toBe(false);
  });
});

describe("planInstall", () => {
  it("picks the package manager by lock file in the vendor's order, else npm install, and says why", () => {
    const both = tree({ "package.json": "{}", "yarn.lock": "", "package-lock.json": "{}" });
    expect(planInstall(both)).toMatchObject({ manager: "yarn", argv: ["yarn", "install", "--frozen-lockfile"], reason: "yarn.lock found" });
    expect(planInstall(tree({ "package.json": "{}", "pnpm-lock.yaml": "", "package-lock.json": "{}" }))).toMatchObject({ manager: "pnpm" });
    expect(planInstall(tree({ "package.json": "{}", "package-lock.json": "{}", "bun.lockb": "" }))).toMatchObject({ argv: ["npm", "ci"] });
    expect(planInstall(tree({ "package.json": "{}", "bun.lockb": "" }))).toMatchObject({ manager: "bun" });
    expect(planInstall(tree({ "package.json": "{}" }))).toEqual({
      manager: "npm",
      argv: ["npm", "install"],
      reason: "no lock file (yarn.lock, pnpm-lock.yaml, package-lock.json, bun.lockb, bun.lock), so npm installs, as in the vendor's build",
    });
    expect(planInstall(tree({ "a.ts": "" }))).toMatchObject({ manager: "none" });
  });

  it("packageManager without its lock file: still npm, and the reason says so", () => {
    const plan = planInstall(tree({ "package.json": JSON.stringify({ packageManager: "pnpm@9.1.0+sha512.abc" }) }));
    expect(plan).toMatchObject({ manager: "npm", argv: ["npm", "install"] });
    expect(plan.reason).toMatch(/so npm installs, as in the vendor's build; package.json's packageManager pnpm@9\.1\.0 needs its lock file to be used$/);
  });

  it("packageManager pinning the lock file's manager: that version runs, through corepack (Yarn 2+ frozen as --immutable)", () => {
    const pnpm = planInstall(tree({ "package.json": JSON.stringify({ packageManager: "pnpm@9.15.0" }), "pnpm-lock.yaml": "" }));
    expect(pnpm).toMatchObject({ pinned: "pnpm@9.15.0", argv: ["pnpm", "install", "--frozen-lockfile"] });
    expect(resolveManager(pnpm, (program) => program === "corepack" || program === "pnpm")).toEqual(["corepack", "pnpm", "install", "--frozen-lockfile"]);
    const berry = planInstall(
      tree({ "package.json": JSON.stringify({ packageManager: "yarn@4.5.0" }), "yarn.lock": "", ".yarnrc.yml": "nodeLinker: node-modules\n" }),
    );
    expect(resolveManager(berry, () => true)).toEqual(["corepack", "yarn", "install", "--immutable"]);
    // Not pinned (or pinned to another manager): the manager on PATH, else corepack.
    const yarn = planInstall(tree({ "package.json": JSON.stringify({ packageManager: "npm@10.0.0" }), "yarn.lock": "" }));
    expect(yarn.pinned).toBeUndefined();
    expect(resolveManager(yarn, (program) => program === "yarn")).toEqual(["yarn", "install", "--frozen-lockfile"]);
    expect(resolveManager(yarn, (program) => program === "corepack")).toEqual(["corepack", "yarn", "install", "--frozen-lockfile"]);
    expect(resolveManager(planInstall(tree({ "package.json": "{}", "bun.lock": "" })), (program) => program === "corepack")).toBeUndefined();
  });
});
