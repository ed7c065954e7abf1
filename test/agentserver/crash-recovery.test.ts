import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import { BACKENDS, freshBackend } from "../support/backends.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";

type Message = { content: string };

describe.each(BACKENDS)("kill -9 in the middle of runs, on %s", (backend) => {
  let agent: AgentProcess | undefined;
  afterEach(async () => {
    await agent?.kill("SIGKILL");
    agent = undefined;
  });

  it("every accepted run completes exactly once, in order, after a restart", { timeout: 240_000 }, async () => {
    const target = freshBackend(backend, "crash");
    const storage = target.databaseUrl
      ? ["--database-url", target.databaseUrl, "--database-schema", target.schema]
      : ["--data-dir", target.dataDir ?? mkdtempSync(join(tmpdir(), "slipway-crash-"))];
    const env = { SLIPWAY_RUN_LEASE_SECONDS: "2" };
    agent = await spawnAgent(["--config", FIXTURE_CONFIG, "--workers", "4", "--no-rate-limit", ...storage], env);
    let client = new Client({ apiUrl: agent.url });

    const threadA = await client.threads.create();
    const threadB = await client.threads.create();
    const input = { delay_ms: 300, steps: 3 };
    const runsA: Array<{ run_id: string }> = [];
    for (let i = 0; i < 3; i++) runsA.push(await client.runs.create(threadA.thread_id, "slow", { input }));
    const runB = await client.runs.create(threadB.thread_id, "slow", { input });

    // Kill once the first run of A is past its first step (it has written a checkpoint).
    for (let i = 0; i < 300; i++) {
      const state = await client.threads.getState<{ messages?: Message[] }>(threadA.thread_id);
      if ((state.values.messages?.length ?? 0) >= 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await agent.kill("SIGKILL");

    agent = await spawnAgent(["--config", FIXTURE_CONFIG, "--workers", "4", "--no-rate-limit", ...storage], env);
    client = new Client({ apiUrl: agent.url });
    await client.runs.join(threadA.thread_id, runsA[2].run_id);
    await client.runs.join(threadB.thread_id, runB.run_id);

    for (const run of runsA) expect((await client.runs.get(threadA.thread_id, run.run_id)).status).toBe("success");
    expect((await client.runs.get(threadB.thread_id, runB.run_id)).status).toBe("success");
    const state = await client.threads.getState<{ messages: Message[] }>(threadA.thread_id);
    const once = ["step left 2", "step left 1", "step left 0"];
    expect(state.values.messages.map((m) => m.content)).toEqual([...once, ...once, ...once]);

    // The run that was executing at the kill was retried: its later checkpoints carry attempt 2.
    const history = await client.threads.getHistory(threadA.thread_id, { limit: 100 });
    const attemptsOfFirst = history
      .filter((s) => (s.metadata as Record<string, unknown> | undefined)?.run_id === runsA[0].run_id)
      .map((s) => (s.metadata as Record<string, unknown>).run_attempt);
    expect(attemptsOfFirst).toContain(2);
  });
});
