import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { BACKENDS, freshBackend } from "../support/backends.ts";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";

const FAULTS_PROJECT = fileURLToPath(new URL("../fixtures/python-faults/langgraph.json", import.meta.url));
const THREADS = 10;
const RUNS_PER_THREAD = 10;

/** The Python workers under `agent` (its children running slipway_worker). */
function workersOf(agent: AgentProcess): number[] {
  const found = execFileSync("pgrep", ["-P", String(agent.child.pid), "-f", "slipway_worker"], { encoding: "utf8" }).trim();
  return found ? found.split("\n").map(Number) : [];
}

/**
 * Issue 27's crash test: 100 runs of a two-step Python graph; the Python worker is killed
 * with SIGKILL, then the whole server, mid-way. After a restart every run ends `success`,
 * and each thread's log holds each run's two steps exactly once, in the order queued.
 */
describe.each(BACKENDS)("kill -9 of the Python worker and of the server during 100 Python runs, on %s", (backend) => {
  let agent: AgentProcess | undefined;
  afterEach(async () => {
    await agent?.kill("SIGKILL");
    agent = undefined;
  });

  it("loses no run and runs no step twice", { timeout: 480_000 }, async () => {
    const target = freshBackend(backend, "pycrash");
    const storage = target.databaseUrl
      ? ["--database-url", target.databaseUrl, "--database-schema", target.schema]
      : ["--data-dir", target.dataDir ?? mkdtempSync(join(tmpdir(), "slipway-pycrash-"))];
    const args = ["--config", FAULTS_PROJECT, "--workers", "4", "--no-rate-limit", ...storage];
    const env = { SLIPWAY_RUN_LEASE_SECONDS: "2", SLIPWAY_PYTHON: inject("pythonPath") };
    agent = await spawnAgent(args, env);
    let client = new Client({ apiUrl: agent.url });

    const runs: { thread: string; run: string; tag: string }[] = [];
    const threads: string[] = [];
    for (let t = 0; t < THREADS; t++) threads.push((await client.threads.create()).thread_id);
    for (let r = 0; r < RUNS_PER_THREAD; r++) {
      for (const [t, thread] of threads.entries()) {
        const tag = `t${t}r${r}`;
        const run = await client.runs.create(thread, "steps", { input: { tag }, multitaskStrategy: "enqueue" });
        runs.push({ thread, run: run.run_id, tag });
      }
    }

    const finished = async () => {
      let done = 0;
      for (const thread of threads) done += (await client.runs.list(thread, { status: "success", limit: 100 })).length;
      return done;
    };
    const waitFor = async (count: number) => {
      for (let i = 0; i < 600 && (await finished()) < count; i++) await new Promise((r) => setTimeout(r, 100));
    };

    await waitFor(20);
    const workers = workersOf(agent);
    expect(workers.length).toBeGreaterThan(0);
    for (const pid of workers) process.kill(pid, "SIGKILL");

    await waitFor(50);
    const before = await finished();
    expect(before).toBeLessThan(THREADS * RUNS_PER_THREAD);
    const orphans = workersOf(agent);
    await agent.kill("SIGKILL");
    // The server's own worker ends when its channel closes; do not leave it to chance.
    for (const pid of orphans) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }

    agent = await spawnAgent(args, env);
    client = new Client({ apiUrl: agent.url });
    for (const thread of threads) {
      const last = runs.filter((r) => r.thread === thread).at(-1)!;
      await client.runs.join(thread, last.run);
    }
    for (const { thread, run } of runs) expect((await client.runs.get(thread, run)).status, run).toBe("success");
    for (const thread of threads) {
      const expected = runs.filter((r) => r.thread === thread).flatMap((r) => [`${r.tag}:1`, `${r.tag}:2`]);
      const state = await client.threads.getState<{ log: string[] }>(thread);
      expect(state.values.log).toEqual(expected);
    }
  });
});
