import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { readLanggraphConfig } from "../../src/agentserver/graphs/langgraph-config.ts";
import { projectNeedsTypeScript } from "../../src/agentserver/graphs/typescript-sources.ts";
import { spawnAgent } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * `slipway agent` registers tsx's loader (a thread with a V8 heap of its own, and a round
 * trip to it for every module imported after it) only for a project that may load
 * TypeScript (decision 0053).
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/js-project", import.meta.url));
const REPO_MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the JavaScript fixture, with `files` added (path → content). */
function project(files: Record<string, string> = {}, graphs: Record<string, string> = { agent: "./src/agent.mjs:graph" }): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-js-project-"));
  made.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  symlinkSync(REPO_MODULES, join(dir, "node_modules"));
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs }));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}
const needs = (dir: string) => projectNeedsTypeScript(readLanggraphConfig(join(dir, "langgraph.json")));

describe("which projects need TypeScript", () => {
  it("plain JavaScript does not; declaration files and TypeScript inside node_modules or dot-directories do not count", () => {
    expect(needs(project())).toBe(false);
    expect(needs(project({ "src/types.d.ts": "export {};", "vendor/node_modules/x/index.ts": "", ".cache/x.ts": "" }))).toBe(false);
  });

  it("a TypeScript file anywhere else in the project does (a JavaScript graph may import it)", () => {
    expect(needs(project({ "src/lib/helper.ts": "export const x = 1;" }))).toBe(true);
    expect(needs(project({ "components.tsx": "" }))).toBe(true);
    expect(needs(project({ "src/tool.mts": "" }))).toBe(true);
  });

  it("a named module in TypeScript, or outside the project's directory, does", () => {
    expect(needs(project({}, { agent: "./src/agent.ts:graph" }))).toBe(true);
    expect(needs(project({}, { agent: "../elsewhere/agent.mjs:graph" }))).toBe(true);
  });

  it("a linked directory is not read through: it is assumed to hold TypeScript", () => {
    const dir = project();
    symlinkSync(tmpdir(), join(dir, "shared"));
    expect(needs(dir)).toBe(true);
  });
});

describe("an agent process", () => {
  const answer = async (dir: string, env: Record<string, string> = {}) => {
    const { databaseUrl, schema } = freshBackend("postgres", "tsx");
    const agent = await spawnAgent(["--config", join(dir, "langgraph.json"), "--database-url", databaseUrl!, "--database-schema", schema], env);
    try {
      const values = await new Client({ apiUrl: agent.url }).runs.wait(null, "agent", { input: { messages: [{ role: "human", content: "hi" }] } });
      return (values as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content;
    } finally {
      await agent.kill();
    }
  };

  it("of a JavaScript project serves it without tsx's loader; with a TypeScript file beside it, compiled (decision 0056) or with the loader when asked", async () => {
    expect(await answer(project())).toBe("no tsx loader");
    expect(await answer(project({ "src/unused.ts": "export const unused = 1;" }))).toBe("no tsx loader");
    expect(await answer(project({ "src/unused.ts": "export const unused = 1;" }), { SLIPWAY_TYPESCRIPT: "loader" })).toBe("tsx loader registered");
  }, 120_000);
});
