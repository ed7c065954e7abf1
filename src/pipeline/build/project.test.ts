import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StepFailure } from "../failure.ts";
import { planInstall } from "./package-manager.ts";
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
  it("picks the package manager by lock file in the vendor's order, then packageManager, then npm install", () => {
    const both = tree({ "package.json": "{}", "yarn.lock": "", "package-lock.json": "{}" });
    expect(planInstall(both)).toMatchObject({ manager: "yarn", argv: ["yarn", "install", "--frozen-lockfile"], reason: "yarn.lock found" });
    expect(planInstall(tree({ "package.json": "{}", "pnpm-lock.yaml": "", "package-lock.json": "{}" }))).toMatchObject({ manager: "pnpm" });
    expect(planInstall(tree({ "package.json": "{}", "package-lock.json": "{}", "bun.lockb": "" }))).toMatchObject({ argv: ["npm", "ci"] });
    expect(planInstall(tree({ "package.json": "{}", "bun.lockb": "" }))).toMatchObject({ manager: "bun" });
    expect(planInstall(tree({ "package.json": JSON.stringify({ packageManager: "pnpm@9.1.0" }) }))).toMatchObject({ argv: ["pnpm", "install"] });
    expect(planInstall(tree({ "package.json": "{}" }))).toMatchObject({ argv: ["npm", "install"], reason: "no lock file" });
    expect(planInstall(tree({ "a.ts": "" }))).toMatchObject({ manager: "none" });
  });
});
