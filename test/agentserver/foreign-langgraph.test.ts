import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { CompiledStateGraph } from "@langchain/langgraph";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { readLanggraphConfig } from "../../src/agentserver/graphs/langgraph-config.ts";
import { checkpointPackageSource } from "../../src/agentserver/checkpointer/checkpoint-package.ts";
import { freshBackend } from "../support/backends.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE_SRC = join(REPO, "test/fixtures/agents/src");

/**
 * A user project with its own copies of @langchain/langgraph and @langchain/core in
 * its node_modules (other packages linked to ours): the server must load and run its
 * graphs without sharing classes with Slipway's copy.
 */
function makeProjectWithOwnLanggraph(): string {
  const root = mkdtempSync(join(tmpdir(), "slipway-foreign-"));
  cpSync(FIXTURE_SRC, join(root, "src"), { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "foreign-agent", type: "module" }));
  writeFileSync(join(root, "langgraph.json"), JSON.stringify({ graphs: { agent: "./src/graphs.ts:agent", approval: "./src/graphs.ts:approval" } }));
  const modules = join(root, "node_modules");
  mkdirSync(join(modules, "@langchain"), { recursive: true });
  for (const pkg of ["langgraph", "langgraph-checkpoint", "core"]) {
    cpSync(join(REPO, "node_modules/@langchain", pkg), join(modules, "@langchain", pkg), { recursive: true, dereference: true });
  }
  for (const entry of readdirSync(join(REPO, "node_modules"))) {
    if (entry === "@langchain" || entry.startsWith(".")) continue;
    symlinkSync(join(REPO, "node_modules", entry), join(modules, entry));
  }
  return root;
}

describe("graphs built with another copy of @langchain/langgraph", () => {
  let server: RunningAgentServer;
  let client: Client;
  let root: string;
  beforeAll(async () => {
    root = makeProjectWithOwnLanggraph();
    const target = freshBackend("pglite", "foreign");
    server = await startAgentServer({ configPath: join(root, "langgraph.json"), port: 0, dataDir: target.dataDir, schema: target.schema, logLevel: "error" });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("loads the project's own copy, not ours", async () => {
    const module = await import(join(root, "src/graphs.ts"));
    expect(module.agent).not.toBeInstanceOf(CompiledStateGraph);
    expect(readLanggraphConfig(join(root, "langgraph.json")).graphs.agent.exportName).toBe("agent");
  });

  it("runs, streams tokens, checkpoints and resumes an interrupt", async () => {
    const thread = await client.threads.create();
    const parts = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ role: "human", content: "hi" }] },
      streamMode: ["messages-tuple", "values"],
    }))
      parts.push(part);
    expect(parts.filter((p) => p.event === "messages").length).toBeGreaterThan(1);
    const state = await client.threads.getState<{ messages: Array<{ content: string; type: string }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hi"],
      ["ai", "You said: hi"],
    ]);

    const asked = await client.threads.create();
    await client.runs.wait(asked.thread_id, "approval", { input: { messages: [] } });
    expect((await client.threads.get(asked.thread_id)).status).toBe("interrupted");
    const resumed = (await client.runs.wait(asked.thread_id, "approval", { command: { resume: "ok" } })) as { messages: Array<{ content: string }> };
    expect(resumed.messages.at(-1)!.content).toBe("answer: ok");
  });

  it("checkpoints with the project's copy of @langchain/langgraph-checkpoint, so the process holds one @langchain/core", () => {
    const theirs = realpathSync(join(root, "node_modules/@langchain/langgraph-checkpoint/dist/index.js"));
    expect(checkpointPackageSource()).toBe(pathToFileURL(theirs).href);
  });
});
