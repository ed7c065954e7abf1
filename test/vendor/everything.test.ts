import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { RemoteGraph } from "@langchain/langgraph/remote";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { keysOf, normalise, without } from "./normalise.ts";
import { startVendorServer, type VendorServer } from "./vendor-server.ts";

/**
 * Issue 14 side by side: `slipway agent` and the vendor's JS server
 * (@langchain/langgraph-api 1.5.1 under `langgraphjs dev`, installed from npm on first
 * use) run the same fixture, test/fixtures/everything, and answer the same requests
 * through the official SDK and RemoteGraph. Each test asserts that both answer alike,
 * after normalise() (ids, timestamps, addresses) and after dropping the differences
 * listed, each with why.
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/everything/langgraph.json", import.meta.url));
// The directories the fixture's langgraph.json reaches into, copied for the vendor.
const FIXTURE_DIRS = ["everything", "graph-kinds", "graph-loading", "http-project"];
const LANGGRAPH_CONFIG = JSON.stringify({ dynamic: { configurable: { review: true }, context: { tone: "dry" } } });
const ALICE = "token-alice";
const BOB = "token-bob";

type Part = { event: string; data: unknown };
interface Side {
  name: "ours" | "vendor";
  url: string;
  as(token: string): Client;
  raw(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
}

function side(name: Side["name"], url: string): Side {
  return {
    name,
    url,
    as: (token) => new Client({ apiUrl: url, defaultHeaders: { authorization: `Bearer ${token}` } }),
    raw: (path, init = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as Record<string, string>) },
      }),
  };
}

const human = (content: string) => ({ messages: [{ role: "human", content }] });
const status = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: { status?: number }) => error.status ?? -1,
  );
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}
const systemAssistant = async (client: Client, graphId: string) => (await client.assistants.search({ graphId, metadata: { created_by: "system" } }))[0]!;

describe("side by side with the vendor's JS server on the everything fixture", () => {
  let agent: AgentProcess;
  let vendor: VendorServer;
  let ours: Side;
  let theirs: Side;
  const dataDir = mkdtempSync(join(tmpdir(), "slipway-vendor-ours-"));

  /** Runs `ask` on both servers, ours first. */
  async function both<T>(ask: (server: Side) => Promise<T>): Promise<{ ours: T; vendor: T }> {
    return { ours: await ask(ours), vendor: await ask(theirs) };
  }

  beforeAll(async () => {
    // The first run installs the vendor's server from npm: allow for a slow registry.
    [agent, vendor] = await Promise.all([
      spawnAgent(["--config", FIXTURE, "--data-dir", dataDir], { LANGGRAPH_CONFIG, LOG_LEVEL: "info" }),
      startVendorServer("everything", FIXTURE_DIRS, { LANGGRAPH_CONFIG }),
    ]);
    ours = side("ours", agent.url);
    theirs = side("vendor", vendor.url);
  }, 600_000);
  afterAll(async () => {
    await Promise.all([agent?.kill(), vendor?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe("graph loading (point 2)", () => {
    it("serves a graph exported as a promise", async () => {
      const answers = await both(async (s) => normalise(await s.as(ALICE).runs.wait(null, "promised", { input: human("hi") })));
      expect(answers.ours).toEqual(answers.vendor);
    });

    it("getLogger() inside a graph writes to the server's log", async () => {
      const answers = await both(async (s) => normalise(await s.as(ALICE).runs.wait(null, "logging", { input: human("hi") })));
      expect(answers.ours).toEqual(answers.vendor);
      // Each server logs in its own format (ours JSON lines, the vendor's winston text).
      await expect.poll(() => agent.output(), { timeout: 10_000 }).toContain("logged from inside the graph");
      await expect.poll(() => vendor.output(), { timeout: 10_000 }).toContain("logged from inside the graph");
    });

    it("LANGGRAPH_CONFIG sets the system assistant's config and context", async () => {
      const answers = await both(async (s) => {
        const system = await systemAssistant(s.as(ALICE), "dynamic");
        return { config: system.config, context: system.context, metadata: system.metadata, name: system.name, id: system.assistant_id };
      });
      // The system assistant's id is derived from the graph id alike on both (uuid5).
      expect(answers.ours).toEqual(answers.vendor);
    });

    it("a factory graph: the graph endpoint and as_node use the graph its assistant's config builds", async () => {
      const answers = await both(async (s) => {
        const client = s.as(ALICE);
        const system = await systemAssistant(client, "dynamic");
        const drawn = await client.assistants.getGraph(system.assistant_id);
        const thread = await client.threads.create();
        await client.runs.wait(thread.thread_id, "dynamic", { input: human("hi"), interruptBefore: ["review"] });
        const before = await client.threads.getState(thread.thread_id);
        await client.threads.updateState(thread.thread_id, { values: { messages: [{ role: "ai", content: "reviewed by hand" }] }, asNode: "review" });
        const after = await client.threads.getState(thread.thread_id);
        return normalise({ drawn, before: { next: before.next, values: before.values }, after: { next: after.next, values: after.values, source: after.metadata?.source } });
      });
      expect(answers.ours).toEqual(answers.vendor);
    });
  });
});
