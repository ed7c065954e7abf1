import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { FIXTURE_CONFIG, startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { spawnAgent } from "../support/agent-process.ts";

/**
 * A graceful stop (what SIGTERM does) must end even while clients hold requests that
 * cannot end in this process any more: a thread stream, which never ends by itself, and
 * a /wait on a run that goes back to the queue because the stop interrupted it.
 */
describe.each(BACKENDS)("stopping an agent server on %s", (backend) => {
  it("ends open thread streams, cuts off waits on runs handed back, and stops", async () => {
    const t: TestAgentServer = await startTestAgentServer(backend, { shutdownGraceMs: 300 });
    const thread = await t.client.threads.create();
    const other = await t.client.threads.create();

    const threadStream = await fetch(`${t.url}/threads/${other.thread_id}/stream`);
    expect(threadStream.status).toBe(200);
    const streamOutcome = threadStream.text().then(
      () => "ended",
      (error: Error) => `failed: ${error.message}`,
    );
    const waitOutcome = t.client.runs.wait(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 100 } }).then(
      () => "answered",
      () => "cut off",
    );
    for (let i = 0; i < 100 && (await t.client.runs.list(thread.thread_id)).at(0)?.status !== "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
    }

    const stopped = await Promise.race([
      t.close().then(() => "stopped"),
      new Promise((resolve) => setTimeout(() => resolve("still stopping after 15 s"), 15_000)),
    ]);
    expect(stopped).toBe("stopped");
    expect(await streamOutcome).toBe("ended");
    expect(await waitOutcome).toBe("cut off");
  });
});

describe("SIGTERM to `slipway agent`", () => {
  it("exits although a thread stream and a wait are open, within SLIPWAY_SHUTDOWN_GRACE_SECONDS", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "slipway-stop-"));
    const agent = await spawnAgent(["--config", FIXTURE_CONFIG, "--data-dir", dataDir, "--no-rate-limit"], { SLIPWAY_SHUTDOWN_GRACE_SECONDS: "0.3" });
    try {
      const client = new Client({ apiUrl: agent.url });
      const thread = await client.threads.create();
      const threadStream = await fetch(`${agent.url}/threads/${thread.thread_id}/stream`);
      const streamOutcome = threadStream.text().then(
        () => "ended",
        (error: Error) => `failed: ${error.message}`,
      );
      const waitOutcome = client.runs.wait(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 100 } }).then(
        () => "answered",
        () => "cut off",
      );
      for (let i = 0; i < 100 && (await client.runs.list(thread.thread_id)).at(0)?.status !== "running"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      const exit = new Promise<number | null>((resolve) => agent.child.once("exit", (code) => resolve(code)));
      agent.child.kill("SIGTERM");
      const code = await Promise.race([exit, new Promise((resolve) => setTimeout(() => resolve("still running after 15 s"), 15_000))]);
      expect(code, agent.output()).toBe(0);
      expect(await streamOutcome).toBe("ended");
      expect(await waitOutcome).toBe("cut off");
    } finally {
      await agent.kill("SIGKILL");
    }
  });
});
