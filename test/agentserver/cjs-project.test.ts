import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSlipway, spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * A TypeScript project made with `npm init -y` (no "type": "module", so its .ts files
 * are CommonJS; test/fixtures/cjs-project, resolving its packages from the repository's
 * node_modules). It used to fail with "Cannot require() ES Module ... in a cycle",
 * which also hid its real errors.
 */
const project = (name: string) => fileURLToPath(new URL(`../fixtures/cjs-project/${name}`, import.meta.url));
const human = (content: string) => ({ messages: [{ role: "human", content }] });
const lastContent = (values: unknown) => (values as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content;

describe("a CommonJS TypeScript project", () => {
  let agent: AgentProcess;
  let client: Client;
  beforeAll(async () => {
    agent = await spawnAgent(["--config", project("langgraph.json"), "--data-dir", freshBackend("pglite", "cjs").dataDir!]);
    client = new Client({ apiUrl: agent.url });
  });
  afterAll(async () => {
    await agent?.kill();
  });

  it("is served: named exports, a default export, extensionless local imports", async () => {
    expect(lastContent(await client.runs.wait(null, "agent", { input: human("hello") }))).toBe("cjs says: hello");
    expect(lastContent(await client.runs.wait(null, "default_export", { input: human("hello") }))).toBe("from the default export");
  });
});

describe("a CommonJS TypeScript project whose graph cannot load: the start fails with the real cause", () => {
  const start = (config: string) =>
    runSlipway(["agent", "--config", project(config), "--port", "0", "--data-dir", freshBackend("pglite", "cjs").dataDir!], {
      env: { SLIPWAY_FIXTURE_MODEL_KEY: undefined },
    });

  it("a graph that throws while imported: its error and where it was thrown", async () => {
    const run = await start("langgraph.throws.json");
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/in a cycle/);
    expect(run.stderr).toContain('graph "needs_key"');
    expect(run.stderr).toContain("SLIPWAY_FIXTURE_MODEL_KEY is not set: the model client cannot be created");
    expect(run.stderr).toMatch(/at requireKey \(.*src\/broken\/throws-at-import\.ts:6:\d+\)/);
  });

  it("a syntax error: the file, line and column", async () => {
    const run = await start("langgraph.syntax.json");
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/in a cycle/);
    expect(run.stderr).toContain('graph "typo"');
    expect(run.stderr).toMatch(/src\/broken\/syntax-error\.ts:4:\d+: ERROR: Expected "\)" but found ";"/);
  });

  it("a missing export: the name asked for and the names there are", async () => {
    const run = await start("langgraph.missing-export.json");
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/in a cycle/);
    expect(run.stderr).toMatch(/graph "agent": .*src\/agent\.ts has no export named "agent" \(it exports "graph"\)/);
  });
});
