import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { watchdogSettings } from "../../src/agentserver/python/load.ts";

const FAULTS_PROJECT = fileURLToPath(new URL("../fixtures/python-faults/langgraph.json", import.meta.url));

/**
 * The Python worker's watchdog (docs/python-protocol.md): a worker whose event loop is held
 * up, or whose memory passes its limit, is killed and restarted, and the run it was serving
 * goes back to the queue and succeeds on its next attempt.
 */
describe("the Python worker's watchdog", () => {
  let agent: TestAgentServer;
  const saved = { ...process.env };
  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    process.env.SLIPWAY_PYTHON_PING_TIMEOUT_SECONDS = "2";
    process.env.SLIPWAY_PYTHON_MEMORY_LIMIT_MB = "250";
    agent = await startTestAgentServer("pglite", { configPath: FAULTS_PROJECT });
  });
  afterAll(async () => {
    await agent?.close();
    process.env = saved;
  });

  it("kills a worker whose loop a node holds up, and the run succeeds on its next attempt", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "blocks", { input: { seconds: 600 } });
    await agent.client.runs.join(thread.thread_id, run.run_id);
    const ended = await agent.client.runs.get(thread.thread_id, run.run_id);
    expect(ended.status).toBe("success");
    expect((await agent.client.threads.getState(thread.thread_id)).values).toMatchObject({ attempts: [2] });
  }, 120_000);

  it("kills a worker over its memory limit, and the run succeeds on its next attempt", async () => {
    const thread = await agent.client.threads.create();
    const run = await agent.client.runs.create(thread.thread_id, "hog", { input: { megabytes: 400 } });
    await agent.client.runs.join(thread.thread_id, run.run_id);
    expect((await agent.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    expect((await agent.client.threads.getState(thread.thread_id)).values).toMatchObject({ attempts: [2] });
  }, 120_000);

  it("refuses limits that are not positive numbers, naming the variable", () => {
    expect(() => watchdogSettings({ SLIPWAY_PYTHON_PING_TIMEOUT_SECONDS: "soon" })).toThrow(
      /SLIPWAY_PYTHON_PING_TIMEOUT_SECONDS must be a positive number, not "soon"/,
    );
    expect(() => watchdogSettings({ SLIPWAY_PYTHON_MEMORY_LIMIT_MB: "-1" })).toThrow(/SLIPWAY_PYTHON_MEMORY_LIMIT_MB/);
    expect(watchdogSettings({ SLIPWAY_PYTHON_PING_TIMEOUT_SECONDS: "1.5", SLIPWAY_PYTHON_MEMORY_LIMIT_MB: "" })).toEqual({ pingTimeoutMs: 1500 });
  });
});
